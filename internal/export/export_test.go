package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/history/historytest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// omLine is one sample line of the export: its family, labels, value, time.
type omLine struct {
	family, labels string
	value          float64
	ms             int64
}

var sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+) (\d+)\.(\d{3})$`)

// parseOM checks the export's framing (one TYPE line per family, the
// family's samples right after it, "# EOF" last) and returns its samples.
func parseOM(t *testing.T, text string) []omLine {
	t.Helper()
	if !strings.HasSuffix(text, "# EOF\n") {
		t.Fatalf("the export does not end with # EOF: ...%q", text[max(0, len(text)-40):])
	}
	var out []omLine
	seen := map[string]bool{}
	family := ""
	sc := bufio.NewScanner(strings.NewReader(strings.TrimSuffix(text, "# EOF\n")))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			if typ != "unknown" || seen[name] {
				t.Fatalf("line %d: %q: a family twice, or not unknown", n, line)
			}
			seen[name], family = true, name
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %d: %q is not a sample line", n, line)
		}
		if m[1] != family {
			t.Fatalf("line %d: sample of %s under family %s", n, m[1], family)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		sec, _ := strconv.ParseInt(m[4], 10, 64)
		ms, _ := strconv.ParseInt(m[5], 10, 64)
		out = append(out, omLine{m[1], m[2], v, sec*1000 + ms})
	}
	return out
}

func TestOpenMetrics(t *testing.T) {
	dir := historytest.Run1()
	var buf bytes.Buffer
	if err := OpenMetrics(&buf, dir); err != nil {
		t.Fatal(err)
	}
	lines := parseOM(t, buf.String())
	d := &rundir.Dir{Path: dir}
	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := rundir.HostCSV.ReadFile(rundir.HostCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}

	// Every scraped sample is there once, with the scrape's target labels.
	byFamily := map[string][]omLine{}
	for _, l := range lines {
		byFamily[l.family] = append(byFamily[l.family], l)
	}
	nodeSamples := 0
	for _, l := range lines {
		if !strings.Contains(l.labels, `job="`+HarnessJob+`"`) {
			nodeSamples++
		}
	}
	if nodeSamples != len(samples) {
		t.Errorf("%d node samples exported, samples.csv.gz has %d", nodeSamples, len(samples))
	}
	const v1 = `{job="validator1",instance="10.213.0.3:26660",node="validator1",role="validator",zone="Tokyo",chain_id="test-chain"}`
	var heights []omLine
	for _, l := range byFamily["cometbft_consensus_height"] {
		if l.labels == v1 {
			heights = append(heights, l)
		}
	}
	var want []rundir.Sample
	for _, s := range samples {
		if s.Node == "validator1" && s.Metric == "cometbft_consensus_height" {
			want = append(want, s)
		}
	}
	if len(heights) == 0 || len(heights) != len(want) {
		t.Fatalf("validator1's height: %d exported with labels %s, %d in samples.csv.gz", len(heights), v1, len(want))
	}
	for i, w := range want {
		if heights[i].value != w.Value || heights[i].ms != w.TimeNs/1e6 {
			t.Errorf("validator1 height #%d: %v at %d ms, want %v at %d ms", i, heights[i].value, heights[i].ms, w.Value, w.TimeNs/1e6)
		}
	}

	// Series in time order (promtool appends in file order).
	last := map[string]int64{}
	for _, l := range lines {
		k := l.family + l.labels
		if p, ok := last[k]; ok && l.ms <= p {
			t.Fatalf("%s: %d ms after %d ms", k, l.ms, p)
		}
		last[k] = l.ms
	}

	// The machine under node_exporter's names: per CPU and mode, summing to
	// host.csv's totals.
	h := host[0]
	var sum, idle float64
	cpus := map[string]bool{}
	for _, l := range byFamily["node_cpu_seconds_total"] {
		if l.ms != h.TimeNs/1e6 {
			continue
		}
		sum += l.value
		if strings.Contains(l.labels, `mode="idle"`) {
			idle += l.value
		}
		cpus[regexp.MustCompile(`cpu="(\d+)"`).FindStringSubmatch(l.labels)[1]] = true
	}
	if len(cpus) != h.CPUs || math.Abs(sum-h.CPUTotalSeconds) > 1e-6 || math.Abs(idle-(h.CPUTotalSeconds-h.CPUBusySeconds)) > 1e-6 {
		t.Errorf("node_cpu_seconds_total at the first sample: %d CPUs, sum %g, idle %g; host.csv: %d CPUs, total %g, busy %g",
			len(cpus), sum, idle, h.CPUs, h.CPUTotalSeconds, h.CPUBusySeconds)
	}
	if got := byFamily["node_load1"]; len(got) != len(host) || got[0].value != h.Load1 {
		t.Errorf("node_load1: %d samples (first %v), host.csv has %d (first %v)", len(got), got, len(host), h.Load1)
	}
	rss := byFamily["namedprocess_namegroup_memory_bytes"]
	if len(rss) == 0 || !strings.Contains(rss[0].labels, `groupname="`) || !strings.Contains(rss[0].labels, `memtype="resident"`) {
		t.Errorf("namedprocess_namegroup_memory_bytes: %v", rss)
	}
}

func TestParseLabels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []label
		err  bool
	}{
		{"", nil, false},
		{"{}", nil, false},
		{`{a="x"}`, []label{{"a", "x"}}, false},
		{`{a="x,y",b="say \"hi\"\n",le="+Inf"}`, []label{{"a", "x,y"}, {"b", "say \"hi\"\n"}, {"le", "+Inf"}}, false},
		{`{a="x"`, nil, true},
		{`{a=x}`, nil, true},
		{`{a="x}`, nil, true},
	} {
		got, err := parseLabels(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if !tc.err && render(got) != render(tc.want) {
			t.Errorf("%q: %s, want %s", tc.in, render(got), render(tc.want))
		}
	}
	// A node's own job label is kept as exported_job, as Prometheus does.
	got, err := withTarget(`{job="x",a="1"}`, target{job: "validator0", instance: "10.0.0.2:26660"})
	if err != nil || got != `{job="validator0",instance="10.0.0.2:26660",node="validator0",a="1",exported_job="x"}` {
		t.Errorf("withTarget: %s, %v", got, err)
	}
}

func readCSV(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(LoadtimeHeader, ",") {
		t.Fatalf("header %v, want %v", recs, LoadtimeHeader)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// The loadtime rows are the run's committed txs with their H+1 latency,
// as loadtime report computes it; a sweep gives one experiment per cell.
func TestLoadtime(t *testing.T) {
	dir := historytest.Run1()
	var buf bytes.Buffer
	runs, err := Loadtime(&buf, dir)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	rows := readCSV(t, buf.Bytes())
	d := &rundir.Dir{Path: dir}
	txs, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]float64{}
	for _, x := range txs {
		if x.State == rundir.StateCommitted && x.HasNext {
			next[x.Hash] = x.LatencyNextMs
		}
	}
	if len(rows) != len(next) || len(rows) == 0 {
		t.Fatalf("%d rows, %d committed txs with an H+1 latency", len(rows), len(next))
	}
	id := uuidOf(res.RunID)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("experiment id %q is not a UUID", id)
	}
	for _, r := range rows {
		ms, ok := next[r["tx_hash"]]
		if !ok {
			t.Fatalf("row of tx %s, not a committed run tx", r["tx_hash"])
		}
		ns, _ := strconv.ParseInt(r["duration_ns"], 10, 64)
		if math.Abs(float64(ns)/1e6-ms) > 0.001 { // txs.csv keeps microseconds
			t.Errorf("tx %s: duration %d ns, txs.csv's H+1 latency %g ms", r["tx_hash"], ns, ms)
		}
		if r["experiment_id"] != id || r["connections"] != "1" || r["rate"] != "6" || r["size"] != "1024" {
			t.Errorf("row %v: want experiment %s, 1 connection, rate 6, size 1024", r, id)
		}
	}

	sweep := filepath.Join(t.TempDir(), "sweep")
	historytest.Sweep(t, sweep, "cometbft@v1.0.1", historytest.Cell{Rate: 200, TPS: 200}, historytest.Cell{Rate: 400, TPS: 300})
	cells, err := RunDirs(sweep)
	if err != nil || len(cells) != 2 {
		t.Fatalf("sweep cells %v, %v", cells, err)
	}
	for i, c := range cells { // copies of one run: give each cell its own run id
		cd := &rundir.Dir{Path: c}
		r, err := cd.ReadResults()
		if err != nil {
			t.Fatal(err)
		}
		r.RunID += strconv.Itoa(i)
		if err := cd.WriteResults(r); err != nil {
			t.Fatal(err)
		}
	}
	buf.Reset()
	if _, err := Loadtime(&buf, sweep); err != nil {
		t.Fatal(err)
	}
	rates := map[string]string{}
	for _, r := range readCSV(t, buf.Bytes()) {
		if old, ok := rates[r["experiment_id"]]; ok && old != r["rate"] {
			t.Fatalf("experiment %s has rates %s and %s", r["experiment_id"], old, r["rate"])
		}
		rates[r["experiment_id"]] = r["rate"]
	}
	if len(rates) != 2 {
		t.Errorf("a sweep of 2 cells gave experiments %v", rates)
	}
}

// TestOpenMetricsMachines: a swarm run's machines.csv exports each machine
// as its own instance beside the harness's, under node_exporter's names.
func TestOpenMetricsMachines(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(historytest.Run1())); err != nil {
		t.Fatal(err)
	}
	d := &rundir.Dir{Path: dir}
	host, _, err := rundir.HostCSV.ReadFile(rundir.HostCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	t0 := host[0].TimeNs
	rows := []rundir.MachineLoad{
		{Machine: "m1", Host: rundir.Host{TimeNs: t0, Load1: 0.25, CPUBusySeconds: 10, CPUTotalSeconds: 40, CPUs: 4}},
		{Machine: "m2", Host: rundir.Host{TimeNs: t0, Load1: 3.5, CPUBusySeconds: 5, CPUTotalSeconds: 20, CPUs: 2}},
		{Machine: "m1", Host: rundir.Host{TimeNs: t0 + 1e9, Load1: 0.5, CPUBusySeconds: 12, CPUTotalSeconds: 44, CPUs: 4}},
	}
	if err := rundir.MachinesCSV.WriteFile(rundir.MachinesCSV.Path(d), rows); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := OpenMetrics(&buf, dir); err != nil {
		t.Fatal(err)
	}
	load := map[string][]float64{}
	cpus := map[string]map[string]bool{}
	for _, l := range parseOM(t, buf.String()) {
		inst := regexp.MustCompile(`instance="([^"]*)"`).FindStringSubmatch(l.labels)
		if inst == nil || !strings.Contains(l.labels, `job="`+HarnessJob+`"`) {
			continue
		}
		switch l.family {
		case "node_load1":
			load[inst[1]] = append(load[inst[1]], l.value)
		case "node_cpu_seconds_total":
			if cpus[inst[1]] == nil {
				cpus[inst[1]] = map[string]bool{}
			}
			cpus[inst[1]][regexp.MustCompile(`cpu="(\d+)"`).FindStringSubmatch(l.labels)[1]] = true
		}
	}
	if fmt.Sprint(load["m1"]) != "[0.25 0.5]" || fmt.Sprint(load["m2"]) != "[3.5]" {
		t.Errorf("node_load1 of the machines: %v", load)
	}
	if len(cpus["m1"]) != 4 || len(cpus["m2"]) != 2 {
		t.Errorf("CPUs per machine: m1 %d, m2 %d; want 4, 2", len(cpus["m1"]), len(cpus["m2"]))
	}
	harness := 0
	for inst, v := range load {
		if inst != "m1" && inst != "m2" {
			harness += len(v)
		}
	}
	if harness != len(host) {
		t.Errorf("the harness's node_load1: %d samples, host.csv has %d", harness, len(host))
	}
}
