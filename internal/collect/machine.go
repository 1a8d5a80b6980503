package collect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A machine of a cluster runner (a swarm node) is watched through a small
// exporter on it, `benchnet node machine-exporter`, which serves /proc's
// load and per-CPU time under node_exporter's names and labels
// (node_load1/5/15, node_cpu_seconds_total{cpu,mode}), so a user's own
// node_exporter serves the collector as well. Its rows go to
// metrics/machines.csv, one series per machine; host.csv stays the
// harness's machine.

// MachineTarget is one machine to watch: its name and where its exporter
// answers now (a function: the address is known once the exporter's task
// runs).
type MachineTarget struct {
	Name string
	URL  func() string
}

// cpuModes are the /proc/stat columns after the cpu name, in order, as
// node_exporter names them (guest time is within user and nice already).
var cpuModes = []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// WriteMachineExposition writes this machine's load and per-CPU time, read
// from /proc, as Prometheus text.
func WriteMachineExposition(w io.Writer) error {
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return fmt.Errorf("read loadavg: %w", err)
	}
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return fmt.Errorf("read stat: %w", err)
	}
	return writeMachineExposition(w, la, st)
}

func writeMachineExposition(w io.Writer, loadavg, stat []byte) error {
	var b bytes.Buffer
	f := strings.Fields(string(loadavg))
	if len(f) < 3 {
		return fmt.Errorf("loadavg: %q", loadavg)
	}
	for i, name := range []string{"node_load1", "node_load5", "node_load15"} {
		fmt.Fprintf(&b, "# TYPE %s gauge\n%s %s\n", name, name, f[i])
	}
	b.WriteString("# TYPE node_cpu_seconds_total counter\n")
	cpus := 0
	for _, line := range strings.Split(string(stat), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu := strings.TrimPrefix(f[0], "cpu")
		for i, mode := range cpuModes {
			if i+1 >= len(f) {
				break
			}
			var ticks uint64
			if _, err := fmt.Sscan(f[i+1], &ticks); err != nil {
				return fmt.Errorf("stat: %s field %d %q", f[0], i+1, f[i+1])
			}
			fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=%q,mode=%q} %g\n", cpu, mode, float64(ticks)/clkTck)
		}
		cpus++
	}
	if cpus == 0 {
		return fmt.Errorf("stat: no per-cpu line")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ServeMachine serves the exposition at /metrics on addr until ctx ends.
func ServeMachine(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		if err := WriteMachineExposition(&b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b.Bytes())
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("machine exporter on %s: %w", addr, err)
	}
	return nil
}

// HostOf reads a machine's row from an exporter's samples, summed as
// ParseStat sums /proc/stat's cpu line: busy is all but idle and iowait,
// irq is irq + softirq, CPUs counts the cpu labels.
func HostOf(samples []promtext.Sample) (rundir.Host, error) {
	var h rundir.Host
	var load [3]bool
	cpus := map[string]bool{}
	for _, s := range samples {
		switch s.Name {
		case "node_load1":
			h.Load1, load[0] = s.Value, true
		case "node_load5":
			h.Load5, load[1] = s.Value, true
		case "node_load15":
			h.Load15, load[2] = s.Value, true
		case "node_cpu_seconds_total":
			ls, err := promtext.ParseLabels(s.Labels)
			if err != nil {
				return h, fmt.Errorf("node_cpu_seconds_total%s: %w", s.Labels, err)
			}
			mode := ls["mode"]
			cpus[ls["cpu"]] = true
			h.CPUTotalSeconds += s.Value
			switch mode {
			case "idle", "iowait":
			case "irq", "softirq":
				h.CPUIRQSeconds += s.Value
				h.CPUBusySeconds += s.Value
			case "steal":
				h.CPUStealSeconds += s.Value
				h.CPUBusySeconds += s.Value
			default:
				h.CPUBusySeconds += s.Value
			}
		}
	}
	if !load[0] || !load[1] || !load[2] || len(cpus) == 0 {
		return h, fmt.Errorf("no node_load1/5/15 or node_cpu_seconds_total in the exposition")
	}
	h.CPUs = len(cpus)
	// The counters are whole ticks: the sums to a tick, without the
	// float sum's tails (2744.3199999999997).
	for _, v := range []*float64{&h.CPUTotalSeconds, &h.CPUBusySeconds, &h.CPUIRQSeconds, &h.CPUStealSeconds} {
		*v = math.Round(*v*clkTck) / clkTck
	}
	return h, nil
}

// machineLoop scrapes one machine's exporter every interval into
// machines.csv; a machine whose exporter has no address yet is skipped.
func (c *Collector) machineLoop(ctx context.Context, m MachineTarget, phase time.Duration) {
	buf := &promtext.Parser{}
	source := "machine " + m.Name
	c.tick(ctx, phase, func(now time.Time) {
		url := m.URL()
		if url == "" {
			return
		}
		buf.Reset()
		err := c.scrape(ctx, Target{Node: m.Name, MetricsURL: url}, buf)
		if ctx.Err() != nil {
			return
		}
		var h rundir.Host
		if err == nil {
			h, err = HostOf(buf.Samples)
		}
		if err != nil {
			c.recordError(now, "", source, err)
			return
		}
		c.recovered(now, "", source)
		h.TimeNs = now.UnixNano()
		row := rundir.MachineLoad{Machine: m.Name, Host: h}
		c.mu.Lock()
		defer c.mu.Unlock()
		_ = c.machines.Write(&row)
	})
}
