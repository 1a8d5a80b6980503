// Command harness measures what the harness costs on real nodes (not a
// test; see bench/README.md): for each benchnet binary given, in rounds
// (binaries interleaved, so the machine's drift falls on all of them), it
// brings up a fresh testnet, sends one load, and takes it down, then prints
// per run the harness's CPU over the load's send window (metrics/proc.csv,
// row "benchnet", between load.json's start and end), the nodes' CPU, the
// generator's lag and the machine's load, and per binary the median.
//
//	go build -o /tmp/bn-new ./cmd/benchnet
//	sudo go run ./bench/harness -rounds 3 /tmp/bn-old /tmp/bn-new
//
// Every command is run with an argument list; the run directories stay
// under -out for inspection.
package main

import (
	"flag"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

func main() {
	rounds := flag.Int("rounds", 3, "runs per binary, interleaved")
	out := flag.String("out", "harness-bench", "directory for the run directories")
	rate := flag.String("rate", "700", "load: tx/s per connection")
	conns := flag.String("c", "2", "load: connections per target")
	dur := flag.String("duration", "30s", "load: how long to send")
	manifest := flag.String("manifest", "", "manifest (default: the built-in quickstart)")
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 {
		log.Fatal("usage: harness [flags] BENCHNET_BINARY...")
	}
	cpu := map[string][]float64{}
	for r := 1; r <= *rounds; r++ {
		for _, bin := range bins {
			name := filepath.Base(bin)
			dir, err := runOnce(bin, filepath.Join(*out, name), *manifest, *rate, *conns, *dur)
			if err != nil {
				log.Printf("%s round %d: %v", name, r, err)
				continue
			}
			m, err := measure(dir)
			if err != nil {
				log.Printf("%s round %d: %v", name, r, err)
				continue
			}
			cpu[name] = append(cpu[name], m.harness)
			fmt.Printf("%-12s round %d: harness %5.1f %% of a core, nodes %4.0f %%, lag p99 %.2f ms max %.1f ms, load1 %.1f-%.1f, valid %v, ok %d/%d\n",
				name, r, 100*m.harness, 100*m.nodes, m.lagP99, m.lagMax, m.load1[0], m.load1[1], m.valid, m.ok, m.expected)
		}
	}
	for _, bin := range bins {
		name := filepath.Base(bin)
		v := slices.Clone(cpu[name])
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		fmt.Printf("%-12s harness median %.1f %% (min %.1f, max %.1f, n=%d)\n", name, 100*v[len(v)/2], 100*v[0], 100*v[len(v)-1], len(v))
	}
}

// runOnce is up, load, down with one binary; it returns the load's run
// directory.
func runOnce(bin, out, manifest, rate, conns, dur string) (string, error) {
	up := []string{"up", "-o", filepath.Join(out, "up")}
	if manifest != "" {
		up = append(up, manifest)
	}
	before, _ := filepath.Glob(filepath.Join(out, "up", "*"))
	if err := run(bin, up...); err != nil {
		return "", err
	}
	after, _ := filepath.Glob(filepath.Join(out, "up", "*"))
	var upDir string
	for _, d := range after {
		if !slices.Contains(before, d) {
			upDir = d
		}
	}
	if upDir == "" {
		return "", fmt.Errorf("up made no run directory under %s", filepath.Join(out, "up"))
	}
	defer func() {
		if err := run(bin, "down", upDir); err != nil {
			log.Printf("down %s: %v", upDir, err)
		}
	}()
	before, _ = filepath.Glob(filepath.Join(out, "load", "*"))
	if err := run(bin, "load", "--run", upDir, "-o", filepath.Join(out, "load"), "--rate", rate, "-c", conns, "--duration", dur); err != nil {
		return "", err
	}
	after, _ = filepath.Glob(filepath.Join(out, "load", "*"))
	for _, d := range after {
		if !slices.Contains(before, d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("load made no run directory")
}

func run(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		return fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), args[0], err, lines[len(lines)-1])
	}
	return nil
}

type figures struct {
	harness, nodes float64 // cores
	lagP99, lagMax float64 // ms, the worst connection's
	load1          [2]float64
	valid          bool
	ok, expected   int
}

// measure reads one load run directory.
func measure(path string) (figures, error) {
	var f figures
	d, err := rundir.Open(path)
	if err != nil {
		return f, err
	}
	l, err := d.ReadLoad()
	if err != nil {
		return f, err
	}
	t0, t1 := l.Start.UnixNano(), l.End.UnixNano()
	f.valid, f.ok, f.expected = l.Valid, l.OK, l.Expected
	for _, c := range l.Conns {
		f.lagP99, f.lagMax = max(f.lagP99, c.LagP99Ms), max(f.lagMax, c.LagMaxMs)
	}
	procs, _, err := rundir.ProcCSV.ReadFile(d.Join(rundir.ProcCSV.Name))
	if err != nil {
		return f, err
	}
	// Per process, the CPU seconds between its first and last sample
	// inside the window, over the time between them.
	type span struct{ t0, t1, c0, c1 float64 }
	spans := map[string]*span{}
	for _, p := range procs {
		if p.TimeNs < t0 || p.TimeNs > t1 {
			continue
		}
		s := spans[p.Node]
		t := float64(p.TimeNs) / 1e9
		if s == nil {
			spans[p.Node] = &span{t, t, p.CPUSeconds, p.CPUSeconds}
			continue
		}
		s.t1, s.c1 = t, p.CPUSeconds
	}
	for node, s := range spans {
		if s.t1 <= s.t0 {
			continue
		}
		rate := (s.c1 - s.c0) / (s.t1 - s.t0)
		if node == rundir.HarnessNode {
			f.harness = rate
		} else {
			f.nodes += rate
		}
	}
	if _, ok := spans[rundir.HarnessNode]; !ok {
		return f, fmt.Errorf("%s: no harness samples in the send window", path)
	}
	hosts, _, err := rundir.HostCSV.ReadFile(d.Join(rundir.HostCSV.Name))
	if err != nil {
		return f, err
	}
	f.load1 = [2]float64{1e9, 0}
	for _, h := range hosts {
		if h.TimeNs >= t0 && h.TimeNs <= t1 {
			f.load1[0], f.load1[1] = min(f.load1[0], h.Load1), max(f.load1[1], h.Load1)
		}
	}
	return f, nil
}
