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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/release"
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
	cmd := exec.Command(bin, "qa", filepath.Join(dir, "qa.toml"), "--runner", "swarm", "--quick",
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
