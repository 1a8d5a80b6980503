package promtext

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// expfmtFlatten is the reference the line parser replaced: expfmt's metric
// families flattened back into text-format series. The two must agree.
func expfmtFlatten(t *testing.T, in string) []Sample {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(in))
	if err != nil {
		t.Fatalf("expfmt: %v", err)
	}
	var out []Sample
	add := func(name string, m *dto.Metric, extra string, extraV, v float64) {
		var pairs []labelPair
		for _, l := range m.GetLabel() {
			pairs = append(pairs, labelPair{l.GetName(), l.GetValue()})
		}
		if extra != "" {
			pairs = append(pairs, labelPair{extra, formatBound(extraV)})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
		out = append(out, Sample{Name: name, Labels: formatLabels(pairs), Value: v})
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
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Labels < out[j].Labels
	})
	return out
}

func sameSamples(a, b []Sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Labels != b[i].Labels ||
			!(a[i].Value == b[i].Value || math.IsNaN(a[i].Value) && math.IsNaN(b[i].Value)) {
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
			var p Parser
			if err := p.Parse(strings.NewReader(c.in)); err != nil {
				t.Fatal(err)
			}
			want := expfmtFlatten(t, c.in)
			if !sameSamples(p.Samples, want) {
				t.Errorf("line parser\n%v\nexpfmt\n%v", p.Samples, want)
			}
			// A second scrape into the same parser (interned strings) is the same.
			p.Reset()
			if err := p.Parse(strings.NewReader(c.in)); err != nil {
				t.Fatal(err)
			}
			if !sameSamples(p.Samples, want) {
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
			var p Parser
			err := p.Parse(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %q", err, c.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || fmt.Sprintf("line %d", pe.Line) != c.want {
				t.Errorf("error %v is not an *Error of %s", err, c.want)
			}
			var ep expfmt.TextParser
			if _, err := ep.TextToMetricFamilies(bytes.NewReader([]byte(c.in))); err == nil {
				t.Errorf("expfmt accepts %q: the case is wrong", c.in)
			}
		})
	}
}

// realExposition was scraped from a cometbft v1.0.1 kvstore node with
// instrumentation.prometheus = true after 5 txs.
const realExposition = "testdata/cometbft-v1.0.1.prom"

func flattenText(t *testing.T, in []byte) []Sample {
	t.Helper()
	var p Parser
	if err := p.Parse(bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	return p.Samples
}

func TestParseGolden(t *testing.T) {
	in, err := os.ReadFile(realExposition)
	if err != nil {
		t.Fatal(err)
	}
	got := flattenText(t, in)
	var sb strings.Builder
	for _, s := range got {
		fmt.Fprintf(&sb, "%s%s %s\n", s.Name, s.Labels, strconv.FormatFloat(s.Value, 'g', -1, 64))
	}
	golden := "testdata/cometbft-v1.0.1.golden"
	testenv.Golden(t, golden, []byte(sb.String()))

	// Independent of the golden file: every sample line of the exposition is
	// one row, and the values we rely on are right.
	lines := 0
	for _, l := range strings.Split(string(in), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines++
		}
	}
	if len(got) != lines {
		t.Errorf("%d samples, exposition has %d sample lines", len(got), lines)
	}
	find := func(name, label string) (float64, bool) {
		for _, s := range got {
			if s.Name == name && strings.Contains(s.Labels, label) {
				return s.Value, true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name, label string
		want        float64
	}{
		{"cometbft_consensus_height", `chain_id="test-chain-lrLCYl"`, 14},
		{"cometbft_consensus_total_txs", `chain_id=`, 5},
		{"cometbft_consensus_block_size_bytes", `chain_id=`, 577},
		{"cometbft_mempool_size", `chain_id=`, 0},
	} {
		v, ok := find(c.name, c.label)
		if !ok || v != c.want {
			t.Errorf("%s%s = %v (found %v), want %v", c.name, c.label, v, ok, c.want)
		}
	}
	// Histograms: the +Inf bucket equals _count for the same labels.
	inf, ok1 := find("cometbft_consensus_block_interval_seconds_bucket", `le="+Inf"`)
	cnt, ok2 := find("cometbft_consensus_block_interval_seconds_count", `chain_id=`)
	if !ok1 || !ok2 || inf != cnt || cnt == 0 {
		t.Errorf("block_interval +Inf bucket %v (%v) vs count %v (%v)", inf, ok1, cnt, ok2)
	}
	// Labels are sorted and parse back.
	for _, s := range got {
		m, err := ParseLabels(s.Labels)
		if err != nil {
			t.Fatalf("%s: %v", s.Labels, err)
		}
		var pairs []labelPair
		for k, v := range m {
			pairs = append(pairs, labelPair{k, v})
		}
		sortPairs(pairs)
		if formatLabels(pairs) != s.Labels {
			t.Fatalf("labels %q do not round-trip: %q", s.Labels, formatLabels(pairs))
		}
	}
}

func sortPairs(p []labelPair) {
	for i := range p {
		for j := i + 1; j < len(p); j++ {
			if p[j].name < p[i].name {
				p[i], p[j] = p[j], p[i]
			}
		}
	}
}

func TestParseExposition(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // flattened rows, "" with wantErr
		wantErr  bool
	}{
		{name: "gauge", in: "# TYPE g gauge\ng{b=\"2\",a=\"1\"} 3.5\n", want: "g{a=\"1\",b=\"2\"} 3.5\n"},
		{name: "untyped escapes", in: "u{x=\"a\\\"b\\\\c\\nd\"} 1\n", want: "u{x=\"a\\\"b\\\\c\\nd\"} 1\n"},
		{name: "summary", in: "# TYPE s summary\ns{quantile=\"0.5\"} 2\ns_sum 10\ns_count 4\n", want: "s{quantile=\"0.5\"} 2\ns_count 4\ns_sum 10\n"},
		{name: "histogram without explicit +Inf", in: "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 3\nh_count 2\n",
			want: "h_bucket{le=\"+Inf\"} 2\nh_bucket{le=\"1\"} 1\nh_count 2\nh_sum 3\n"},
		{name: "NaN value", in: "g NaN\n", want: "g NaN\n"},
		{name: "garbage", in: "this is not { an exposition\n", wantErr: true},
		{name: "bad value", in: "g{a=\"1\"} notanumber\n", wantErr: true},
		{name: "html error page", in: "<html><body>502 Bad Gateway</body></html>\n", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Parser
			err := p.Parse(strings.NewReader(c.in))
			if c.wantErr {
				if err == nil {
					t.Fatalf("no error for %q", c.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for _, s := range p.Samples {
				fmt.Fprintf(&sb, "%s%s %s\n", s.Name, s.Labels, strconv.FormatFloat(s.Value, 'g', -1, 64))
			}
			if sb.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", sb.String(), c.want)
			}
		})
	}
}
