package collect

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// sample is one flattened series value: the row of samples.csv.gz without
// time and node.
type sample struct {
	name   string
	labels string // exposition syntax, sorted by label name; "" when none
	value  float64
}

// sampleBuf is reused between scrapes of one node to keep allocations low.
type sampleBuf struct {
	samples []sample
	parser  expfmt.TextParser
	pairs   []labelPair
}

type labelPair struct{ name, value string }

func (b *sampleBuf) reset() { b.samples = b.samples[:0] }

// parseExposition parses a Prometheus text exposition and appends every
// series to buf, flattened the way the text format shows it (histograms as
// _bucket{le}/_sum/_count, summaries as {quantile}/_sum/_count), sorted by
// name then labels so a scrape always writes in the same order.
func parseExposition(r io.Reader, buf *sampleBuf) error {
	fams, err := buf.parser.TextToMetricFamilies(r)
	if err != nil {
		return fmt.Errorf("parse exposition: %w", err)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	start := len(buf.samples)
	for _, n := range names {
		buf.flatten(fams[n])
	}
	s := buf.samples[start:]
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].name != s[j].name {
			return s[i].name < s[j].name
		}
		return s[i].labels < s[j].labels
	})
	return nil
}

func (b *sampleBuf) flatten(f *dto.MetricFamily) {
	name := f.GetName()
	for _, m := range f.GetMetric() {
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			b.add(name, m, "", 0, m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			b.add(name, m, "", 0, m.GetGauge().GetValue())
		case dto.MetricType_UNTYPED:
			b.add(name, m, "", 0, m.GetUntyped().GetValue())
		case dto.MetricType_SUMMARY:
			s := m.GetSummary()
			for _, q := range s.GetQuantile() {
				b.add(name, m, "quantile", q.GetQuantile(), q.GetValue())
			}
			b.add(name+"_sum", m, "", 0, s.GetSampleSum())
			b.add(name+"_count", m, "", 0, float64(s.GetSampleCount()))
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			inf := false
			for _, bk := range h.GetBucket() {
				inf = inf || math.IsInf(bk.GetUpperBound(), +1)
				b.add(name+"_bucket", m, "le", bk.GetUpperBound(), float64(bk.GetCumulativeCount()))
			}
			if !inf { // the parser drops an explicit +Inf bucket; it equals _count
				b.add(name+"_bucket", m, "le", math.Inf(+1), float64(h.GetSampleCount()))
			}
			b.add(name+"_sum", m, "", 0, h.GetSampleSum())
			b.add(name+"_count", m, "", 0, float64(h.GetSampleCount()))
		}
	}
}

// add appends one sample; extra names an additional label ("le",
// "quantile") with the float value extraV.
func (b *sampleBuf) add(name string, m *dto.Metric, extra string, extraV float64, v float64) {
	b.pairs = b.pairs[:0]
	for _, l := range m.GetLabel() {
		b.pairs = append(b.pairs, labelPair{l.GetName(), l.GetValue()})
	}
	if extra != "" {
		b.pairs = append(b.pairs, labelPair{extra, formatBound(extraV)})
	}
	sort.Slice(b.pairs, func(i, j int) bool { return b.pairs[i].name < b.pairs[j].name })
	b.samples = append(b.samples, sample{name: name, labels: formatLabels(b.pairs), value: v})
}

func formatBound(v float64) string {
	if math.IsInf(v, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatLabels renders labels as in the text format: {a="x",b="y\"z"}.
func formatLabels(pairs []labelPair) string {
	if len(pairs) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(p.name)
		sb.WriteString(`="`)
		sb.WriteString(labelEscaper.Replace(p.value))
		sb.WriteByte('"')
	}
	sb.WriteByte('}')
	return sb.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

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
