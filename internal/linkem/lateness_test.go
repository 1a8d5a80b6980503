package linkem

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Every value lands in the bucket whose bounds hold it.
func TestLatBucketBounds(t *testing.T) {
	vals := []int64{-5, 0, 1, 1023, 1024, 1025, 1279, 1280, 1281, 2047, 2048, 2049, 1 << 20, 1<<20 + 1, 1 << 34, 1<<34 + 1, math.MaxInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vals = append(vals, int64(math.Exp(r.Float64()*40)))
	}
	for _, v := range vals {
		b := latBucket(v)
		if b < 0 || b >= LatBuckets {
			t.Fatalf("latBucket(%d) = %d out of range", v, b)
		}
		if v > LatUpper(b) {
			t.Errorf("latBucket(%d) = %d, but its upper bound is %d", v, b, LatUpper(b))
		}
		if b > 0 && v <= LatUpper(b-1) {
			t.Errorf("latBucket(%d) = %d, but it fits bucket %d (≤ %d)", v, b, b-1, LatUpper(b-1))
		}
	}
	for i := 1; i < LatBuckets-1; i++ {
		lo, hi := LatUpper(i-1), LatUpper(i)
		if hi <= lo || float64(hi) > 1.26*float64(lo) {
			t.Errorf("bucket %d: (%d, %d] not a ≤25 %% step", i, lo, hi)
		}
	}
	if LatUpper(4) != 2048 || LatUpper(LatBuckets-2) != 1<<34 {
		t.Errorf("octave bounds: %d, last %d", LatUpper(4), LatUpper(LatBuckets-2))
	}
}

// Quantiles from the buckets stay within a bucket's width of the exact ones.
func TestLatenessQuantile(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  func(r *rand.Rand) int64
	}{
		{"tens of µs", func(r *rand.Rand) int64 { return 20_000 + r.Int64N(60_000) }},
		{"log-uniform 1µs–100ms", func(r *rand.Rand) int64 { return int64(math.Exp(math.Log(1e3) + r.Float64()*math.Log(1e5))) }},
		{"mostly fast, 2% slow", func(r *rand.Rand) int64 {
			if r.Float64() < 0.02 {
				return 5_000_000 + r.Int64N(5_000_000)
			}
			return 50_000 + r.Int64N(10_000)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h LatHist
			r := rand.New(rand.NewPCG(3, 4))
			var xs []int64
			for range 20000 {
				v := tc.gen(r)
				xs = append(xs, v)
				h.Observe(v)
			}
			slices.Sort(xs)
			l := h.Snapshot()
			if l.Frames != uint64(len(xs)) || l.Max != time.Duration(xs[len(xs)-1]) {
				t.Fatalf("frames %d max %v, want %d %v", l.Frames, l.Max, len(xs), time.Duration(xs[len(xs)-1]))
			}
			for _, q := range []float64{0.5, 0.9, 0.99, 1} {
				exact := float64(xs[int(math.Ceil(q*float64(len(xs))))-1])
				got := float64(l.Quantile(q))
				if got < exact/1.26 || got > exact*1.26 {
					t.Errorf("q%.2f: %v, exact %v", q, time.Duration(got), time.Duration(exact))
				}
			}
		})
	}
	if (Lateness{}).Quantile(0.99) != 0 {
		t.Error("empty histogram has a nonzero quantile")
	}
}

// Recording a frame allocates nothing: it runs for every delayed frame.
func TestLatenessObserveNoAlloc(t *testing.T) {
	var h LatHist
	v := int64(0)
	if n := testing.AllocsPerRun(1000, func() { v += 777; h.Observe(v) }); n != 0 {
		t.Errorf("observe allocates %v times per frame", n)
	}
}

func sample(sec int, minDelay time.Duration, maxNs int64, lat ...time.Duration) rundir.LinkemLatenessSample {
	var h LatHist
	for _, d := range lat {
		h.Observe(int64(d))
	}
	l := h.Snapshot()
	return rundir.LinkemLatenessSample{Time: time.Unix(1000+int64(sec), 0).UTC(), Frames: l.Frames, SumNs: int64(l.Sum), MaxNs: maxNs, MinDelayNs: int64(minDelay), Counts: l.Counts}
}

func rep(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestCheckLateness(t *testing.T) {
	us := time.Microsecond
	ms := time.Millisecond
	at := func(sec int) time.Time { return time.Unix(1000+int64(sec), 0) }
	// Cumulative lines: 100 fast frames before the window; inside it 1000
	// frames of which 2 % are 5 ms late; the line after the window adds
	// 1000 very late frames that must not count.
	inWin := append(rep(100, 50*us), append(rep(980, 60*us), rep(20, 5*ms)...)...)
	series := []rundir.LinkemLatenessSample{
		sample(0, 0, 0),
		sample(1, 40*ms, 50_000, rep(100, 50*us)...),
		sample(2, 40*ms, int64(5*ms), inWin...),
		sample(3, 40*ms, int64(2*time.Second), append(inWin, rep(1000, 2*time.Second)...)...),
	}
	for _, tc := range []struct {
		name       string
		series     []rundir.LinkemLatenessSample
		from, to   time.Time
		met        bool
		frames     uint64
		p99, maxMs float64 // ms; p99 checked within 25 %
		boundMs    float64
		verdict    string
	}{
		{"window misses the late tail", series, at(1), at(2), false, 1000, 5, 5, 1, "LATE"},
		{"only fast frames", series, at(0), at(1), true, 100, 0.05, 0.05, 1, "on time"},
		{"whole series", series, time.Time{}, time.Time{}, false, 2100, 2000, 2000, 1, "LATE"},
		{"switch started after from", series[1:], at(-10), at(1), true, 100, 0.05, 0.05, 1, "on time"},
		{"bound scales with long delays", []rundir.LinkemLatenessSample{sample(0, 500*ms, 0), sample(1, 500*ms, int64(5*ms), inWin...)}, at(0), at(1), true, 1100, 5, 5, 10, "on time"},
		{"no frames", []rundir.LinkemLatenessSample{sample(0, 0, 0), sample(1, 0, 0)}, at(0), at(1), true, 0, 0, 0, 1, "nothing to check"},
		{"no series", nil, at(0), at(1), true, 0, 0, 0, 0, "no lateness record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckLateness(tc.series, tc.from, tc.to, "test")
			if c.Met != tc.met || c.Frames != tc.frames || c.BoundMs != tc.boundMs {
				t.Errorf("met %v frames %d bound %v ms, want %v %d %v: %+v", c.Met, c.Frames, c.BoundMs, tc.met, tc.frames, tc.boundMs, c)
			}
			if c.P99Ms < tc.p99/1.26 || c.P99Ms > tc.p99*1.26 || c.MaxMs != tc.maxMs {
				t.Errorf("p99 %v max %v ms, want ~%v and %v", c.P99Ms, c.MaxMs, tc.p99, tc.maxMs)
			}
			if !strings.Contains(c.Verdict, tc.verdict) {
				t.Errorf("verdict %q lacks %q", c.Verdict, tc.verdict)
			}
		})
	}
}

func TestLatenessBound(t *testing.T) {
	for _, tc := range []struct{ min, want time.Duration }{
		{0, time.Millisecond},
		{10 * time.Millisecond, time.Millisecond},
		{50 * time.Millisecond, time.Millisecond},
		{72 * time.Millisecond, 1440 * time.Microsecond},
		{250 * time.Millisecond, 5 * time.Millisecond},
	} {
		if got := LatenessBound(tc.min); got != tc.want {
			t.Errorf("LatenessBound(%v) = %v, want %v", tc.min, got, tc.want)
		}
	}
}

// TestReadLatenessSeries: the switch's lines through rundir's codec.
func TestReadLatenessSeries(t *testing.T) {
	var b bytes.Buffer
	enc := rundir.LinkemLatenessSeries.NewEncoder(&b)
	for i := range 3 {
		s := sample(i, time.Millisecond, 7, rep(i, time.Duration(i)*time.Millisecond)...)
		if err := enc.Encode(&s); err != nil {
			t.Fatal(err)
		}
	}
	full := b.String()
	for _, tc := range []struct {
		name, in string
		n        int
		err      string
	}{
		{"whole", full, 3, ""},
		{"cut last line", full + `{"t":"2026-`, 3, ""},
		{"bad middle line", strings.Replace(full, "\n", "\nnot json\n", 1), 1, "lateness.jsonl:2:"},
		{"too many buckets", `{"counts":[` + strings.Repeat("0,", LatBuckets) + "0]}\n", 0, "buckets"},
	} {
		got, _, err := rundir.LinkemLatenessSeries.Read(strings.NewReader(tc.in), rundir.LinkemLatenessSeriesFile)
		if len(got) != tc.n || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %d lines, err %v; want %d, %q", tc.name, len(got), err, tc.n, tc.err)
		}
	}
	got, _, _ := rundir.LinkemLatenessSeries.Read(strings.NewReader(full), rundir.LinkemLatenessSeriesFile)
	if got[2].Frames != 2 || got[2].MinDelayNs != int64(time.Millisecond) || !got[2].Time.Equal(time.Unix(1002, 0)) {
		t.Errorf("round trip: %+v", got[2])
	}
}

func TestLatenessMetricsGolden(t *testing.T) {
	var h LatHist
	for _, d := range []time.Duration{500, 3 * time.Microsecond, 40 * time.Microsecond, 40 * time.Microsecond, 2 * time.Millisecond, 30 * time.Second} {
		h.Observe(int64(d))
	}
	var b bytes.Buffer
	if err := WriteLatenessMetrics(&b, h.Snapshot()); err != nil {
		t.Fatal(err)
	}
	golden(t, "lateness.golden", b.String())

	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("not valid Prometheus text: %v", err)
	}
	hist := fams["benchnet_linkem_lateness_seconds"].GetMetric()[0].GetHistogram()
	if hist.GetSampleCount() != 6 || math.Abs(hist.GetSampleSum()-30.00208350) > 1e-6 {
		t.Errorf("count %d sum %v", hist.GetSampleCount(), hist.GetSampleSum())
	}
	for _, bk := range hist.GetBucket() {
		want := map[float64]uint64{1.024e-06: 1, 4.096e-06: 2, 6.5536e-05: 4, 0.002097152: 5, 17.179869184: 5}[bk.GetUpperBound()]
		if want != 0 && bk.GetCumulativeCount() != want {
			t.Errorf("le=%v: %d, want %d", bk.GetUpperBound(), bk.GetCumulativeCount(), want)
		}
	}
	if g := fams["benchnet_linkem_lateness_max_seconds"].GetMetric()[0].GetGauge().GetValue(); g != 30 {
		t.Errorf("max gauge %v", g)
	}
	// Prometheus's own linter, when installed, on the golden file.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(b.Bytes())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v: %s", err, out)
		}
	}
}

// The switch writes its own record: a first line at start, one per tick,
// the last at Close, and counters.prom with the histogram in it.
func TestUserspaceRecords(t *testing.T) {
	dir := t.TempDir()
	u, err := NewUserspace(UserspaceConfig{RecordDir: dir, RecordEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	u.late.Observe(int64(3 * time.Millisecond)) // as the delivery loop would
	time.Sleep(70 * time.Millisecond)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	series, truncated, err := rundir.LinkemLatenessSeries.ReadFile(dir + "/" + rundir.LinkemLatenessSeriesFile)
	if err != nil || truncated {
		t.Fatal(err)
	}
	if len(series) < 3 {
		t.Fatalf("%d lines, want a first, ticks and a last", len(series))
	}
	last := series[len(series)-1]
	var maxNs int64
	for _, s := range series {
		maxNs = max(maxNs, s.MaxNs)
	}
	if last.Frames != 1 || maxNs != int64(3*time.Millisecond) {
		t.Errorf("last line %+v, series max %d", last, maxNs)
	}
	prom, err := os.ReadFile(dir + "/" + rundir.LinkemCountersFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prom), "benchnet_linkem_lateness_seconds_count 1\n") {
		t.Errorf("counters.prom lacks the histogram:\n%s", prom)
	}
	c, err := rundir.DecodeLinkemCounters(bytes.NewReader(prom), rundir.LinkemCountersFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Lateness == nil || c.Lateness.Count != 1 || c.Lateness.MaxSeconds != 0.003 {
		t.Errorf("counters.prom decodes to lateness %+v, want the one 3 ms frame", c.Lateness)
	}
}

// BenchmarkLatenessObserve is the cost added to every delayed frame.
func BenchmarkLatenessObserve(b *testing.B) {
	var h LatHist
	for i := range b.N {
		h.Observe(int64(i&0xffff) * 37)
	}
}
