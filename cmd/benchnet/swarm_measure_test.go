package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

var readyRe = regexp.MustCompile(`ready: \d+ nodes .* in ([0-9.]+m?s|[0-9]+m[0-9.]+s)`)

// BenchmarkSwarmReadyTimes measures time to ready of N validators on one
// engine of a 3-engine swarm (every node in the manager's zone) and spread
// over all three, then `down`: a measurement, not a test (minutes per size;
// root and docker). BENCHNET_SWARM_SIZES sets the sizes ("16" when unset):
//
//	BENCHNET_INTEGRATION=1 BENCHNET_SWARM_SIZES=16,32 go test ./cmd/benchnet -run '^$' -bench SwarmReadyTimes -benchtime 1x
//
// Each size and engine count reports ready_s (as `up` printed it), up_s
// (up's whole wall time) and down_s.
func BenchmarkSwarmReadyTimes(t *testing.B) {
	sizes := os.Getenv("BENCHNET_SWARM_SIZES")
	if sizes == "" {
		sizes = "16"
	}
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	c := swarmtest.New(t, swarmtest.Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})
	q := make([]string, 0, 2)
	for _, h := range c.Hosts() {
		q = append(q, strconv.Quote(h))
	}
	for i, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("BENCHNET_SWARM_SIZES: %q", s)
		}
		for j, zones := range []string{`["z0"]`, `["z0", "z1", "z2"]`} {
			m := fmt.Sprintf(`name = "ready%d"
seed = 1
[network]
subnet = "10.213.%d.0/24"
[node.validator]
count = %d
release = "cometbft@v1.0.1"
app = "kvstore"
zones = %s
[node.validator.config]
"log_level" = "error"
[infra]
runner = "swarm"
engines = [%s]
`, n, 230+2*i+j, n, zones, strings.Join(q, ", "))
			p := filepath.Join(t.TempDir(), "m.toml")
			if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			out := testenv.OutputDir(t)
			start := time.Now()
			b, err := exec.Command(bin, "up", p, "--output", out, "--force").CombinedOutput()
			upTook := time.Since(start)
			dirs, _ := filepath.Glob(filepath.Join(out, "*-ready*"))
			var downTook time.Duration
			if len(dirs) == 1 {
				ds := time.Now()
				if db, derr := exec.Command(bin, "down", dirs[0]).CombinedOutput(); derr != nil {
					t.Errorf("down: %v\n%s", derr, db)
				}
				downTook = time.Since(ds)
			}
			engines := map[bool]string{true: "1 engine", false: "3 engines"}[j == 0]
			if err != nil {
				t.Errorf("%d validators on %s: up failed after %s: %v\n%s", n, engines, upTook.Round(time.Millisecond), err, lastLines(string(b), 15))
				continue
			}
			ready := "?"
			if mm := readyRe.FindStringSubmatch(string(b)); mm != nil {
				ready = mm[1]
				if d, err := time.ParseDuration(ready); err == nil {
					t.ReportMetric(d.Seconds(), fmt.Sprintf("ready_s/%dv-%s", n, strings.ReplaceAll(engines, " ", "")))
				}
			}
			t.ReportMetric(upTook.Seconds(), fmt.Sprintf("up_s/%dv-%s", n, strings.ReplaceAll(engines, " ", "")))
			t.ReportMetric(downTook.Seconds(), fmt.Sprintf("down_s/%dv-%s", n, strings.ReplaceAll(engines, " ", "")))
			t.Logf("MEASURE %d validators on %s: ready in %s (up %s in all), down %s", n, engines, ready,
				upTook.Round(time.Millisecond), downTook.Round(time.Millisecond))
		}
	}
}

// BenchmarkSwarmQAQuick runs the quick QA of one build against itself on a
// 3-engine swarm of this machine (issue 32 item 3: `qa --runner swarm
// --quick` ends with a verdict): the built-in qa.toml and qa-rotate.toml
// with the swarm's engines added. A
// measurement (about half an hour), not a test:
//
//	BENCHNET_INTEGRATION=1 BENCHNET_TEST_KEEP=1 go test ./cmd/benchnet -run '^$' -bench SwarmQAQuick -benchtime 1x -timeout 90m -v
//
// It reports the QA's exit code and wall time, and logs its verdict lines;
// the QA's output streams to qa.log in the output directory.
func BenchmarkSwarmQAQuick(t *testing.B) {
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	c := swarmtest.New(t, swarmtest.Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})
	dir := t.TempDir()
	// A manifest names engines only with a runner that drives several, so
	// the runner is written too (--runner swarm below is then the same).
	engines := "\n[infra]\nrunner = \"swarm\"\nengines = [" + tomlStrings(c.Hosts()) + "]\n"
	for _, f := range []string{"qa.toml", "qa-rotate.toml"} {
		data, err := examples.FS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("[infra]")) {
			t.Fatalf("%s has an [infra] table: merge the engines into it", f)
		}
		if err := os.WriteFile(filepath.Join(dir, f), append(data, engines...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := testenv.OutputDir(t)
	logf, err := os.Create(filepath.Join(out, "qa.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var buf bytes.Buffer
	// A swarm testnet takes 60-90 s to come up, so the quick plan is ~26
	// min: the 15 min quick budget refuses it before it starts.
	cmd := exec.Command(bin, "qa", filepath.Join(dir, "qa.toml"), "--runner", "swarm", "--quick", "--budget", "40m",
		"--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--output", out)
	cmd.Stdout = io.MultiWriter(&buf, logf)
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("benchnet qa: %v", err)
	}
	t.ReportMetric(float64(code), "exit_code")
	t.ReportMetric(took.Minutes(), "wall_min")
	t.Logf("MEASURE qa --runner swarm --quick on 3 engines: exit %d after %s\n%s", code, took.Round(time.Second), lastLines(buf.String(), 30))
}

// BenchmarkSwarm200 is the 200-node dress rehearsal (issue 32 item 5):
// examples/qa-200-slow.toml (175 validators, 20 full nodes, 5 seeds, in
// slow motion) run on a 3-engine swarm of this machine. A measurement
// (tens of minutes, root and docker), not a test:
//
//	BENCHNET_INTEGRATION=1 BENCHNET_TEST_KEEP=1 go test ./cmd/benchnet -run '^$' -bench Swarm200 -benchtime 1x -timeout 90m -v
//
// It reports time to ready, the manager's task rate (node starts per
// second), the run's teardown time, RSS and peers per node (from the
// run's own scrapes), and what is left on the engines after it.
func BenchmarkSwarm200(t *testing.B) {
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	c := swarmtest.New(t, swarmtest.Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})
	raw, err := examples.FS.ReadFile("qa-200-slow.toml")
	if err != nil {
		t.Fatal(err)
	}
	q := make([]string, 0, 2)
	for _, h := range c.Hosts() {
		q = append(q, strconv.Quote(h))
	}
	m := strings.Replace(string(raw), "runner = \"swarm\"\n", "runner = \"swarm\"\nengines = ["+strings.Join(q, ", ")+"]\n", 1)
	p := filepath.Join(t.TempDir(), "qa-200-slow.toml")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.OutputDir(t)
	logf, err := os.Create(filepath.Join(out, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var tail bytes.Buffer
	start := time.Now()
	cmd := exec.Command(bin, "run", p, "--output", out, "--ready-timeout", "45m", "--force", "--no-history", "--scrape-interval", "5s")
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logf, &tail), io.MultiWriter(logf, &tail)
	runErr := cmd.Run()
	took := time.Since(start)
	t.Logf("MEASURE run: %s, exit %v; log in %s", took.Round(time.Second), runErr, logf.Name())
	dirs, _ := filepath.Glob(filepath.Join(out, "*-qa-200-slow"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v\n%s", dirs, lastLines(tail.String(), 30))
	}
	dir := dirs[0]
	swarm200Figures(t, dir, took)
	for _, e := range c.Engines() {
		args := []string{"ps", "-a", "--quiet", "--filter", "label=benchnet.run"}
		ec := exec.Command("docker", args...)
		if e.Host != "" {
			ec.Env = append(os.Environ(), "DOCKER_HOST="+e.Host)
		}
		b, _ := ec.CombinedOutput()
		t.Logf("MEASURE left on %s after the run: %d containers", e.Name, len(strings.Fields(string(b))))
	}
	if runErr != nil {
		t.Errorf("run: %v\n%s", runErr, lastLines(tail.String(), 30))
	}
}

// swarm200Figures reads the run directory's events, proc.csv and samples
// for the bring-up's figures.
func swarm200Figures(t *testing.B, dir string, took time.Duration) {
	d := &rundir.Dir{Path: dir}
	evs, err := d.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	var first, lastStart, ready, loadDone, down time.Time
	starts, failed := 0, 0
	for _, e := range evs {
		switch e.Kind {
		case rundir.EventNetworkUp:
			first = e.Time
		case rundir.EventNodeStarted:
			starts++
			lastStart = e.Time
		case rundir.EventNodeStartFailed:
			failed++
		case rundir.EventTestnetReady:
			ready = e.Time
		case rundir.EventDrained, rundir.EventLoadDone:
			loadDone = e.Time
		case rundir.EventTestnetDown:
			down = e.Time
		}
	}
	if !first.IsZero() && !lastStart.IsZero() {
		span := lastStart.Sub(first)
		t.ReportMetric(float64(starts)/span.Seconds(), "tasks/s")
		t.Logf("MEASURE %d node starts (%d failed) in %s after the network: %.2f tasks/s", starts, failed, span.Round(time.Second), float64(starts)/span.Seconds())
	}
	if !ready.IsZero() {
		t.ReportMetric(ready.Sub(first).Seconds(), "ready_s")
		t.Logf("MEASURE ready %s after the network (%s after the last start)", ready.Sub(first).Round(time.Second), ready.Sub(lastStart).Round(time.Second))
	}
	if !down.IsZero() && !loadDone.IsZero() {
		t.ReportMetric(down.Sub(loadDone).Seconds(), "down_s")
		t.Logf("MEASURE down %s after the drain", down.Sub(loadDone).Round(time.Second))
	}
	t.ReportMetric(took.Seconds(), "run_s")

	procs, _, err := rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d))
	if err != nil {
		t.Errorf("proc.csv: %v", err)
	}
	rss := map[string]int64{}
	for _, p := range procs {
		if p.Node != rundir.HarnessNode {
			rss[p.Node] = max(rss[p.Node], p.RSSBytes)
		}
	}
	if v := sortedValues(rss); len(v) > 0 {
		t.ReportMetric(float64(v[len(v)/2])/(1<<20), "MiB/node")
		t.Logf("MEASURE peak RSS of %d nodes: median %d MiB, max %d MiB, sum %d MiB", len(v), v[len(v)/2]>>20, v[len(v)-1]>>20, sum(v)>>20)
	}
	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(d))
	if err != nil {
		t.Errorf("samples: %v", err)
	}
	peers := map[string]int64{}
	for _, s := range samples {
		if s.Metric == "cometbft_p2p_peers" {
			peers[s.Node] = int64(s.Value) // the last scrape
		}
	}
	seeds, others := map[string]int64{}, map[string]int64{}
	for n, v := range peers {
		if strings.HasPrefix(n, "seed") {
			seeds[n] = v
		} else {
			others[n] = v
		}
	}
	for _, g := range []struct {
		name string
		m    map[string]int64
	}{{"seeds", seeds}, {"validators and full nodes", others}} {
		if v := sortedValues(g.m); len(v) > 0 {
			t.Logf("MEASURE peers of %s (%d scraped): min %d, median %d, max %d", g.name, len(v), v[0], v[len(v)/2], v[len(v)-1])
		}
	}
	t.Logf("MEASURE scraped %d of 200 nodes", len(peers))
}

func sortedValues(m map[string]int64) []int64 {
	v := make([]int64, 0, len(m))
	for _, x := range m {
		v = append(v, x)
	}
	slices.Sort(v)
	return v
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}
