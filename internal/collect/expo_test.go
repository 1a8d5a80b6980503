package collect

import (
	"bytes"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// expfmtFlatten is the reference the line parser replaced: expfmt's metric
// families flattened back into text-format series. The two must agree.
func expfmtFlatten(t *testing.T, in string) []sample {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(in))
	if err != nil {
		t.Fatalf("expfmt: %v", err)
	}
	var out []sample
	add := func(name string, m *dto.Metric, extra string, extraV, v float64) {
		var pairs []labelPair
		for _, l := range m.GetLabel() {
			pairs = append(pairs, labelPair{l.GetName(), l.GetValue()})
		}
		if extra != "" {
			pairs = append(pairs, labelPair{extra, formatBound(extraV)})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
		out = append(out, sample{name, formatLabels(pairs), v})
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m, "", 0, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m, "", 0, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m, "", 0, m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add(name, m, "quantile", q.GetQuantile(), q.GetValue())
				}
				add(name+"_sum", m, "", 0, s.GetSampleSum())
				add(name+"_count", m, "", 0, float64(s.GetSampleCount()))
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				inf := false
				for _, bk := range h.GetBucket() {
					inf = inf || math.IsInf(bk.GetUpperBound(), +1)
					add(name+"_bucket", m, "le", bk.GetUpperBound(), float64(bk.GetCumulativeCount()))
				}
				if !inf {
					add(name+"_bucket", m, "le", math.Inf(+1), float64(h.GetSampleCount()))
				}
				add(name+"_sum", m, "", 0, h.GetSampleSum())
				add(name+"_count", m, "", 0, float64(h.GetSampleCount()))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].labels < out[j].labels
	})
	return out
}

func sameSamples(a, b []sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].labels != b[i].labels ||
			!(a[i].value == b[i].value || math.IsNaN(a[i].value) && math.IsNaN(b[i].value)) {
			return false
		}
	}
	return true
}

// TestParseMatchesExpfmt holds the line parser to expfmt's reading of the
// same text, on a real CometBFT exposition and on the format's corners.
func TestParseMatchesExpfmt(t *testing.T) {
	real, err := os.ReadFile(realExposition)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, in string }{
		{"cometbft v1.0.1", string(real)},
		{"labels out of order", "# TYPE g gauge\ng{z=\"1\",a=\"2\",m=\"3\"} 1\n"},
		{"escapes", "u{x=\"a\\\"b\\\\c\\nd\",y=\"\\\"\"} 1\n"},
		{"timestamp", "# TYPE c counter\nc{a=\"1\"} 7 1700000000000\n"},
		{"special values", "a +Inf\nb -Inf\nc NaN\nd 1e-07\ne -0.5\n"},
		{"help and blank lines", "# HELP g a gauge\n\n# TYPE g gauge\ng 1\n\n# free comment\n"},
		{"histogram bounds rewritten", "# TYPE h histogram\nh_bucket{le=\"1e+06\"} 1\nh_bucket{le=\"0.50\"} 1\nh_bucket{le=\"+Inf\"} 3\nh_sum 9\nh_count 3\n"},
		{"histogram without +Inf, two series", "# TYPE h histogram\nh_bucket{a=\"x\",le=\"1\"} 1\nh_sum{a=\"x\"} 3\nh_count{a=\"x\"} 2\nh_bucket{a=\"y\",le=\"1\"} 1\nh_bucket{a=\"y\",le=\"+Inf\"} 4\nh_sum{a=\"y\"} 3\nh_count{a=\"y\"} 4\n"},
		{"summary", "# TYPE s summary\ns{quantile=\"0.50\",m=\"q\"} 2\ns{quantile=\"0.99\",m=\"q\"} 5\ns_sum{m=\"q\"} 10\ns_count{m=\"q\"} 4\n"},
		{"untyped le is a plain label", "u_bucket{le=\"0.50\"} 1\n"},
		{"colon names", "ns:rate_5m{job=\"x\"} 2.5\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf sampleBuf
			if err := parseExposition(strings.NewReader(c.in), &buf); err != nil {
				t.Fatal(err)
			}
			want := expfmtFlatten(t, c.in)
			if !sameSamples(buf.samples, want) {
				t.Errorf("line parser\n%v\nexpfmt\n%v", buf.samples, want)
			}
			// A second scrape into the same buffer (interned strings) is the same.
			buf.reset()
			if err := parseExposition(strings.NewReader(c.in), &buf); err != nil {
				t.Fatal(err)
			}
			if !sameSamples(buf.samples, want) {
				t.Errorf("second scrape differs")
			}
		})
	}
}

// TestParseErrors: what expfmt refused, the line parser refuses too, with
// the line number.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unterminated labels", "g{a=\"1\" 3\n", "line 1"},
		{"no value", "g{a=\"1\"}\n", "line 1"},
		{"bad escape", "g{a=\"\\q\"} 1\n", "line 1"},
		{"bad bound", "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n", "line 2"},
		{"bad timestamp", "g 1 soon\n", "line 1"},
		{"digit first", "1g 1\n", "line 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf sampleBuf
			err := parseExposition(strings.NewReader(c.in), &buf)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %q", err, c.want)
			}
			var p expfmt.TextParser
			if _, err := p.TextToMetricFamilies(bytes.NewReader([]byte(c.in))); err == nil {
				t.Errorf("expfmt accepts %q: the case is wrong", c.in)
			}
		})
	}
}
