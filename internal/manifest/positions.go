package manifest

import (
	"bufio"
	"bytes"
	"sort"
	"strings"
)

// positions maps dotted key paths ("node.validator.count") to the line they
// are written on. go-toml reports positions only for its own decode errors;
// validation happens after decoding, so we scan the file once for keys.
// Manifests are flat enough (tables, key = value) that a line scanner that
// understands quotes, comments and table headers is exact for them.
type positions map[string]int

func scanPositions(data []byte) positions {
	p := positions{}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			inner := strings.TrimPrefix(strings.TrimPrefix(line, "["), "[")
			if end := strings.Index(inner, "]"); end >= 0 {
				table = joinKey(splitKey(inner[:end]))
				if _, ok := p[table]; !ok {
					p[table] = n
				}
			}
			continue
		}
		key, ok := leadingKey(line)
		if !ok {
			continue
		}
		full := key
		if table != "" {
			full = table + "." + key
		}
		if _, ok := p[full]; !ok {
			p[full] = n
		}
	}
	return p
}

// leadingKey returns the key of a `key = value` line, its parts joined by dots
// with quotes removed.
func leadingKey(line string) (string, bool) {
	inQuote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '=':
			return joinKey(splitKey(line[:i])), true
		}
	}
	return "", false
}

// splitKey splits a dotted TOML key, keeping quoted parts whole.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

// line finds field or its nearest enclosing table that is written in the file.
func (p positions) line(field string) int {
	for f := field; f != ""; {
		if n, ok := p[f]; ok {
			return n
		}
		i := strings.LastIndex(f, ".")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	// A table written only through its sub-tables ("node" of
	// [node.validator]): the first of them.
	best := 0
	for k, n := range p {
		if strings.HasPrefix(k, field+".") && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// order returns the keys of m sorted by where prefix.key appears in the file;
// keys not in the file sort last, by name.
func (p positions) order(prefix string, m map[string]*Group) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		li, lj := p.line(prefix+"."+names[i]), p.line(prefix+"."+names[j])
		if li == lj {
			return names[i] < names[j]
		}
		if li == 0 || lj == 0 {
			return lj == 0
		}
		return li < lj
	})
	return names
}

// keyAt returns the key written on line n, or "".
func (p positions) keyAt(n int) string {
	best := ""
	for k, l := range p {
		// Prefer the longest key: a table header shares the line with nothing.
		if l == n && len(k) > len(best) {
			best = k
		}
	}
	return best
}
