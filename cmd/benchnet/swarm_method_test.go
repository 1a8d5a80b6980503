package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// BenchmarkSwarmMethod runs two of the seeds' methods unchanged on a
// 3-engine swarm of this machine (issue 32, "How it is checked"): the
// built-in examples/zones.toml (4 validators in 4 AWS regions, 5 %
// jitter) and a gossip series after examples/gossip-series2.toml, each
// with `--runner swarm`. A measurement (minutes; root and docker), not a
// test:
//
//	BENCHNET_INTEGRATION=1 BENCHNET_TEST_KEEP=1 go test ./cmd/benchnet -run '^$' -bench SwarmMethod -benchtime 1x -timeout 60m -v
//
// What did not fit is scaled and logged: zones.toml's load runs 20 s of
// its 60, and the series runs 16 hosts where the seed ran 32, with its
// m = 2 and m = 6 variants of four (2 cores carry 3 engines here).
func BenchmarkSwarmMethod(t *testing.B) {
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	// Unlabelled: zones.toml's zones are AWS regions, which no engine is
	// labelled for; unzoned placement puts its nodes anywhere.
	c := swarmtest.New(t, swarmtest.Options{Workers: 2})
	engines := "\n[infra]\nrunner = \"swarm\"\nengines = [" + tomlStrings(c.Hosts()) + "]\n"
	dir := t.TempDir()
	out := testenv.OutputDir(t)
	write := func(example string, edits ...[2]string) string {
		data, err := examples.FS.ReadFile(example)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range edits {
			if !bytes.Contains(data, []byte(e[0])) {
				t.Fatalf("%s has no %q any more: update the benchmark", example, e[0])
			}
			data = bytes.Replace(data, []byte(e[0]), []byte(e[1]), 1)
		}
		p := filepath.Join(dir, example)
		if err := os.WriteFile(p, append(data, engines...), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) (string, time.Duration, int) {
		start := time.Now()
		b, err := exec.Command(bin, args...).CombinedOutput()
		return string(b), time.Since(start), exitOf(err)
	}

	// Zones: every node's links through its agent, checked by the agents.
	zones := write("zones.toml", [2]string{`duration = "60s"`, `duration = "20s"`})
	text, took, code := run("run", zones, "--runner", "swarm", "--output", out)
	t.ReportMetric(took.Seconds(), "zones_s")
	if code != exitOK {
		t.Fatalf("benchnet run zones.toml --runner swarm: exit %d\n%s", code, lastLines(text, 40))
	}
	zdir := onlyRunDirOf(t, out, "zones")
	res, err := (&rundir.Dir{Path: zdir}).ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(zdir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := sectionOf(string(report), "### Network emulation")
	switch {
	case res.Linkem == nil:
		t.Errorf("results.json has no link check: the agents' record was not read")
	case !strings.Contains(section, "| agent |") || !strings.Contains(section, "link agents"):
		t.Errorf("the report's network section does not name the agents:\n%s", section)
	case strings.Contains(section, "not measured"):
		t.Errorf("the report's network section has %q:\n%s", "not measured", section)
	}
	if res.Linkem != nil {
		t.Logf("MEASURE zones.toml --runner swarm (3 engines, 20 s of load): %s; link check: %s", took.Round(time.Second), res.Linkem.Verdict)
	}
	t.Logf("zones headline:\n%s", sectionOf(string(report), "## Headline"))

	// A gossip series across the engines: every host's deliveries and the
	// MDR table of the compare report.
	series := write("gossip-series2.toml",
		[2]string{"count = 32", "count = 16"},
		[2]string{"\n[variants.m12]\nnetwork.m = 12\n", "\n"},
		[2]string{"\n[variants.m16]\nnetwork.m = 16\n", "\n"})
	// More mesh links carry more duplicates (m6 read +227 %): judged, not
	// failed on; the series fails on delivery.
	text, took, code = run("compare", series, "--runner", "swarm", "--repeats", "1", "--fail-on", "mdr", "--output", out)
	t.ReportMetric(took.Seconds(), "gossip_series_s")
	if code != exitOK {
		t.Fatalf("benchnet compare gossip-series2.toml --runner swarm: exit %d\n%s", code, lastLines(text, 40))
	}
	cdirs, _ := filepath.Glob(filepath.Join(out, "*-compare"))
	if len(cdirs) != 1 {
		t.Fatalf("compare directories: %v", cdirs)
	}
	idx, err := experiment.ReadCompareIndex(cdirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			t.Errorf("run %d (%s): %s %s", r.Order, r.Variant, r.Status, r.Error)
			continue
		}
		rd := r.RunDir
		if !filepath.IsAbs(rd) {
			rd = filepath.Join(cdirs[0], rd)
		}
		res, err := (&rundir.Dir{Path: rd}).ReadResults()
		if err != nil || res.Gossip == nil {
			t.Errorf("run %d (%s): no gossip results (%v)", r.Order, r.Variant, err)
			continue
		}
		g, hosts := res.Gossip, 0
		for _, h := range g.HostNodes {
			if h.Delivered > 0 {
				hosts++
			}
		}
		t.Logf("MEASURE gossip series on 3 engines, variant %s: MDR %.4f (%d of %d), %d of %d hosts delivered", r.Variant, g.MDR, g.Delivered, g.Expected, hosts, len(g.HostNodes))
		if hosts != len(g.HostNodes) || len(g.HostNodes) != 16 {
			t.Errorf("variant %s: %d of %d hosts delivered, want 16 of 16", r.Variant, hosts, len(g.HostNodes))
		}
	}
	cmp, err := os.ReadFile(filepath.Join(cdirs[0], "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cmp), "MDR %") {
		t.Errorf("compare.md has no MDR table")
	}
	t.Logf("MEASURE gossip series --runner swarm: %s\n%s", took.Round(time.Second), sectionOf(string(cmp), "| variant |"))
}

// sectionOf is text from the first line starting with head up to the next
// heading (the whole rest when none).
func sectionOf(text, head string) string {
	i := strings.Index(text, "\n"+head)
	if i < 0 {
		return ""
	}
	rest := text[i+1:]
	if j := strings.Index(rest[len(head):], "\n#"); j >= 0 {
		return rest[:len(head)+j]
	}
	return rest
}
