// Package promtext reads and writes the Prometheus text exposition format
// (0.0.4): the collector's scrapes of every node, and the files benchnet
// itself writes in the format (the link switch's counters.prom). It is a
// leaf: the standard library only, so rundir's codecs can use it.
package promtext

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sample is one flattened series value: the row of samples.csv.gz without
// time and node.
type Sample struct {
	Name   string
	Labels string // exposition syntax, sorted by label name; "" when none
	Value  float64
	Line   int // the line of the text it came from (a synthesised +Inf bucket: its _count's)
}

// Parser parses expositions into Samples. It is meant to be reused between
// scrapes of one node, so that a scrape of the same series as the last one
// allocates (almost) nothing: the body buffer, the samples and the label
// scratch space are kept, and names and label strings are interned across
// scrapes. The zero Parser is ready to use.
type Parser struct {
	Samples []Sample
	body    bytes.Buffer
	pairs   []labelPair
	scratch []byte
	intern  map[string]string
	types   map[string]string // family name -> TYPE, this scrape
	infs    map[string]bool   // histogram name+labels without le that have a +Inf bucket
	ln      int               // the line being parsed
}

type labelPair struct{ name, value string }

// Reset empties Samples, keeping their storage and the interned strings.
func (b *Parser) Reset() { b.Samples = b.Samples[:0] }

// str returns s as a string shared with earlier scrapes: the lookup with a
// converted []byte does not allocate, so only a series never seen before
// costs a string.
func (b *Parser) str(s []byte) string {
	if v, ok := b.intern[string(s)]; ok {
		return v
	}
	if b.intern == nil || len(b.intern) > 1<<16 { // bounded: churning labels (peer ids) cannot grow it forever
		b.intern = map[string]string{}
	}
	v := string(s)
	b.intern[v] = v
	return v
}

// Error is a line of an exposition that does not parse.
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Parse parses a Prometheus text exposition (format 0.0.4) and appends
// every series to b.Samples, flattened the way the text format shows it
// (histograms as _bucket{le}/_sum/_count, summaries as
// {quantile}/_sum/_count), sorted by name then labels so a scrape always
// writes in the same order. It reads the lines as they are rather than
// building expfmt's metric families and flattening them back: that was
// 55 % of a scrape's CPU and 17.6 k allocations per CometBFT exposition.
// The output is the same as the family round trip (a test holds the two
// together): labels sorted, le and quantile bounds in Go's shortest float
// form, and a histogram without an explicit +Inf bucket gets one equal to
// its _count. A line that does not parse is an *Error.
func (b *Parser) Parse(r io.Reader) error {
	b.body.Reset()
	if _, err := b.body.ReadFrom(r); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	clear(b.types)
	clear(b.infs)
	if b.types == nil {
		b.types, b.infs = map[string]string{}, map[string]bool{}
	}
	start := len(b.Samples)
	data := b.body.Bytes()
	for b.ln = 1; len(data) > 0; b.ln++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimRight(line, " \t\r")
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			b.comment(line)
			continue
		}
		if err := b.line(line); err != nil {
			return &Error{Line: b.ln, Err: err}
		}
	}
	b.addInfBuckets(start)
	s := b.Samples[start:]
	slices.SortFunc(s, func(x, y Sample) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Labels, y.Labels)
	})
	return nil
}

// comment records a "# TYPE name type" line; HELP and other comments are skipped.
func (b *Parser) comment(line []byte) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(line[1:], " \t"), []byte("TYPE"))
	if !ok || len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
		return
	}
	rest = bytes.TrimLeft(rest, " \t")
	name, typ, _ := bytes.Cut(rest, []byte(" "))
	b.types[b.str(name)] = b.str(bytes.TrimSpace(typ))
}

// family is the histogram or summary a sample line belongs to, and which
// part of it the line is ("bucket", "sum", "count", "" for a quantile).
func (b *Parser) family(name []byte) (typ, part string, base []byte) {
	for _, suf := range [...]string{"_bucket", "_sum", "_count"} {
		if n, ok := bytes.CutSuffix(name, []byte(suf)); ok {
			if t := b.types[string(n)]; t == "histogram" || t == "gauge_histogram" || (t == "summary" && suf != "_bucket") {
				return t, suf[1:], n
			}
		}
	}
	if b.types[string(name)] == "summary" {
		return "summary", "", name
	}
	return "", "", name
}

// line parses `name{labels} value [timestamp]` into one sample.
func (b *Parser) line(l []byte) error {
	i := 0
	for i < len(l) && isNameChar(l[i], i == 0) {
		i++
	}
	if i == 0 {
		return fmt.Errorf("invalid metric name in %.80q", l)
	}
	name := l[:i]
	typ, part, _ := b.family(name)
	bound := "" // the label whose value is a float bound
	switch {
	case part == "bucket":
		bound = "le"
	case typ == "summary" && part == "":
		bound = "quantile"
	}
	b.pairs = b.pairs[:0]
	if i < len(l) && l[i] == '{' {
		n, err := b.labels(l[i+1:], bound)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		i += 1 + n
	}
	rest := bytes.TrimLeft(l[i:], " \t")
	if len(rest) == len(l[i:]) && len(rest) > 0 {
		return fmt.Errorf("%s: want a space before the value in %.80q", name, l)
	}
	val := rest
	if sp := bytes.IndexAny(rest, " \t"); sp >= 0 {
		val = rest[:sp]
		if _, err := strconv.ParseInt(string(bytes.TrimSpace(rest[sp:])), 10, 64); err != nil {
			return fmt.Errorf("%s: bad timestamp %q", name, bytes.TrimSpace(rest[sp:]))
		}
	}
	v, err := parseValue(val)
	if err != nil {
		return fmt.Errorf("%s: bad value %q", name, val)
	}
	slices.SortFunc(b.pairs, func(x, y labelPair) int { return strings.Compare(x.name, y.name) })
	b.scratch = appendLabels(b.scratch[:0], b.pairs)
	s := Sample{Name: b.str(name), Labels: b.str(b.scratch), Value: v, Line: b.ln}
	b.Samples = append(b.Samples, s)
	if part == "bucket" && math.IsInf(b.boundOf(), +1) {
		b.infs[s.Name+b.labelsWithout("le")] = true
	}
	return nil
}

// boundOf is the le of the last parsed pairs (0 when none).
func (b *Parser) boundOf() float64 {
	for _, p := range b.pairs {
		if p.name == "le" {
			v, _ := strconv.ParseFloat(p.value, 64)
			return v
		}
	}
	return 0
}

// labelsWithout renders the last parsed pairs without label skip.
func (b *Parser) labelsWithout(skip string) string {
	b.scratch = appendLabelsSkip(b.scratch[:0], b.pairs, skip)
	return b.str(b.scratch)
}

// addInfBuckets adds the +Inf bucket of every histogram series that has a
// _count but no explicit +Inf bucket (the format requires one; expfmt
// tolerated its absence and so do we).
func (b *Parser) addInfBuckets(start int) {
	n := len(b.Samples)
	for k := start; k < n; k++ {
		s := b.Samples[k]
		base, ok := strings.CutSuffix(s.Name, "_count")
		if !ok {
			continue
		}
		if t := b.types[base]; t != "histogram" && t != "gauge_histogram" {
			continue
		}
		if b.infs[base+"_bucket"+s.Labels] {
			continue
		}
		pairs, err := labelPairs(s.Labels)
		if err != nil {
			continue
		}
		pairs = append(pairs, labelPair{"le", "+Inf"})
		slices.SortFunc(pairs, func(x, y labelPair) int { return strings.Compare(x.name, y.name) })
		b.Samples = append(b.Samples, Sample{Name: base + "_bucket", Labels: string(appendLabels(nil, pairs)), Value: s.Value, Line: s.Line})
	}
}

func labelPairs(s string) ([]labelPair, error) {
	m, err := ParseLabels(s)
	if err != nil {
		return nil, err
	}
	var out []labelPair
	for k, v := range m {
		out = append(out, labelPair{k, v})
	}
	return out, nil
}

// labels parses `a="x",b="y"}` (after the opening brace) into b.pairs and
// returns how many bytes it read, the closing brace included. The value of
// label bound is a float, rewritten in Go's shortest form.
func (b *Parser) labels(l []byte, bound string) (int, error) {
	i := 0
	for {
		for i < len(l) && (l[i] == ' ' || l[i] == ',') {
			i++
		}
		if i < len(l) && l[i] == '}' {
			return i + 1, nil
		}
		j := i
		for j < len(l) && isNameChar(l[j], j == i) && l[j] != ':' {
			j++
		}
		if j == i || j+1 >= len(l) || l[j] != '=' || l[j+1] != '"' {
			return 0, fmt.Errorf("malformed labels near %.40q", l[i:])
		}
		name := b.str(l[i:j])
		j += 2
		val, n, err := b.quoted(l[j:])
		if err != nil {
			return 0, fmt.Errorf("label %s: %w", name, err)
		}
		if name == bound {
			f, err := parseValue([]byte(val))
			if err != nil {
				return 0, fmt.Errorf("label %s: bad bound %q", name, val)
			}
			val = formatBound(f)
		}
		b.pairs = append(b.pairs, labelPair{name, val})
		i = j + n
	}
}

// quoted reads an escaped label value up to its closing quote and returns
// the value and the bytes read (the quote included).
func (b *Parser) quoted(l []byte) (string, int, error) {
	end := bytes.IndexByte(l, '"')
	if end < 0 {
		return "", 0, fmt.Errorf("unterminated value")
	}
	if bytes.IndexByte(l[:end], '\\') < 0 {
		return b.str(l[:end]), end + 1, nil
	}
	var v []byte
	for i := 0; i < len(l); i++ {
		switch c := l[i]; c {
		case '"':
			return b.str(v), i + 1, nil
		case '\\':
			if i+1 >= len(l) {
				return "", 0, fmt.Errorf("unterminated value")
			}
			i++
			switch l[i] {
			case 'n':
				v = append(v, '\n')
			case '\\', '"':
				v = append(v, l[i])
			default:
				return "", 0, fmt.Errorf("invalid escape \\%c", l[i])
			}
		default:
			v = append(v, c)
		}
	}
	return "", 0, fmt.Errorf("unterminated value")
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (!first && '0' <= c && c <= '9')
}

// parseValue parses a sample value as the text format writes it, including
// +Inf, -Inf and NaN.
func parseValue(v []byte) (float64, error) {
	switch string(v) {
	case "+Inf", "Inf":
		return math.Inf(+1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(string(v), 64)
}

func formatBound(v float64) string {
	if math.IsInf(v, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// appendLabels renders labels as in the text format: {a="x",b="y\"z"}.
func appendLabels(dst []byte, pairs []labelPair) []byte { return appendLabelsSkip(dst, pairs, "") }

// appendLabelsSkip is appendLabels without the label named skip.
func appendLabelsSkip(dst []byte, pairs []labelPair, skip string) []byte {
	n := 0
	for _, p := range pairs {
		if p.name == skip {
			continue
		}
		if n++; n == 1 {
			dst = append(dst, '{')
		} else {
			dst = append(dst, ',')
		}
		dst = append(dst, p.name...)
		dst = append(dst, `="`...)
		for k := 0; k < len(p.value); k++ {
			switch c := p.value[k]; c {
			case '\\':
				dst = append(dst, `\\`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '"':
				dst = append(dst, `\"`...)
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '"')
	}
	if n == 0 {
		return dst
	}
	return append(dst, '}')
}

// formatLabels renders labels as in the text format: {a="x",b="y\"z"}.
func formatLabels(pairs []labelPair) string { return string(appendLabels(nil, pairs)) }

// Label renders one label as in the text format, value escaped: port="a\"b".
func Label(name, value string) string {
	b := appendLabels(nil, []labelPair{{name, value}})
	return string(b[1 : len(b)-1]) // without the braces
}

// ParseLabels parses the labels column of samples.csv.gz back into a map.
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("labels %q: want {name=\"value\",...}", s)
	}
	s = s[1 : len(s)-1]
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return nil, fmt.Errorf("labels: malformed near %q", s)
		}
		name := s[:eq]
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, fmt.Errorf("labels: unterminated value of %s", name)
		}
		out[name] = val.String()
		s = s[i+1:]
		s = strings.TrimPrefix(s, ",")
	}
	return out, nil
}
