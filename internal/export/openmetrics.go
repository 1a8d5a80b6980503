// Package export writes a run directory in the formats the ecosystem's
// tools read: OpenMetrics for promtool's backfill (and so Prometheus,
// Grafana and CometBFT's prometheus_plotter.py), loadtime report's raw CSV
// for CometBFT's latency scripts, and one sheet across runs.
package export

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// HarnessJob is the job label of the harness's own series (the machine's
// load and CPU, each node process's CPU and RSS).
const HarnessJob = "benchnet"

// target is the labels Prometheus would give a node's scrape.
type target struct{ job, instance, role, zone string }

// readPlan reads a run directory's plan.json (nil when it has none).
func readPlan(dir string) (*plan.Testnet, error) {
	t, err := plan.Read(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return t, err
}

// targets are the scrape labels of every node of the plan: job = the node,
// instance = the address its metrics were scraped at.
func targets(t *plan.Testnet) map[string]target {
	out := map[string]target{}
	if t == nil {
		return out
	}
	for _, n := range t.Nodes {
		host := n.Host
		if n.Addr.IsValid() {
			host = n.Addr.String()
		}
		inst := host
		if n.PrometheusPort > 0 && host != "" {
			inst = host + ":" + strconv.Itoa(n.PrometheusPort)
		}
		out[n.Name] = target{job: n.Name, instance: inst, role: n.Role, zone: n.Zone}
	}
	return out
}

// point is one sample of one series.
type point struct {
	ns int64
	v  float64
}

// families collects series by metric name, then by label set, keeping
// each series' points in the order added (every source is in time order).
type families map[string]map[string][]point

func (f families) add(metric, labels string, ns int64, v float64) {
	m := f[metric]
	if m == nil {
		m = map[string][]point{}
		f[metric] = m
	}
	m[labels] = append(m[labels], point{ns, v})
}

// OpenMetrics writes the run in dir as OpenMetrics text that
// `promtool tsdb create-blocks-from openmetrics` accepts: every node's
// scraped series (metrics/samples.csv.gz) with Prometheus' target labels
// (job = the node, instance = its metrics address) plus node (as a
// --prometheus run's live scrape has it), role and zone,
// and the harness's series under node_exporter's and process-exporter's
// names (job="benchnet"): node_load1/5/15 and node_cpu_seconds_total from
// metrics/host.csv (and each swarm machine's from metrics/machines.csv,
// instance = the machine), node_memory_MemTotal_bytes from machine.json,
// namedprocess_namegroup_cpu_seconds_total and
// namedprocess_namegroup_memory_bytes per node process from
// metrics/proc.csv.
//
// samples.csv.gz does not keep the exposition's TYPE lines, so every family
// is "unknown" and a histogram's _bucket/_sum/_count are families of their
// own: the series names and labels are the ones a live Prometheus stores,
// so PromQL (rate, histogram_quantile) works as on the live scrape.
func OpenMetrics(w io.Writer, dir string) error {
	d := &rundir.Dir{Path: dir}
	t, err := readPlan(dir)
	if err != nil {
		return err
	}
	tg := targets(t)
	fam := families{}

	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rundir.SamplesCSV.Name, err)
	}
	type seriesKey struct{ node, labels string }
	relabelled := map[seriesKey]string{} // a series repeats at every scrape: relabel it once
	for _, s := range samples {
		k := seriesKey{s.Node, s.Labels}
		labels, ok := relabelled[k]
		if !ok {
			x, known := tg[s.Node]
			if !known {
				x = target{job: s.Node}
			}
			var err error
			if labels, err = withTarget(s.Labels, x); err != nil {
				return fmt.Errorf("%s: node %s, %s: %w", rundir.SamplesCSV.Name, s.Node, s.Metric, err)
			}
			relabelled[k] = labels
		}
		fam.add(s.Metric, labels, s.TimeNs, s.Value)
	}
	if err := harness(d, fam); err != nil {
		return err
	}
	return writeFamilies(w, fam)
}

// harness adds the machine's and the node processes' series.
func harness(d *rundir.Dir, fam families) error {
	m, err := d.ReadMachine()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	inst := "localhost"
	if m != nil && m.Hostname != "" {
		inst = m.Hostname
	}
	base := []label{{"job", HarnessJob}, {"instance", inst}}

	host, _, err := rundir.HostCSV.ReadFile(rundir.HostCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rundir.HostCSV.Name, err)
	}
	var mem int64
	if m != nil {
		mem = m.MemoryBytes
	}
	hostFamilies(fam, base, host, mem)
	// A swarm run's machines, each its own instance (machines.csv).
	machines, _, err := rundir.MachinesCSV.ReadFile(rundir.MachinesCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rundir.MachinesCSV.Name, err)
	}
	byMachine := map[string][]rundir.Host{}
	for _, ml := range machines {
		byMachine[ml.Machine] = append(byMachine[ml.Machine], ml.Host)
	}
	for name, hs := range byMachine {
		hostFamilies(fam, []label{{"job", HarnessJob}, {"instance", name}}, hs, 0)
	}

	procs, _, err := rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rundir.ProcCSV.Name, err)
	}
	for _, p := range procs {
		if p.PID <= 0 {
			continue // a remote node's row, read from its own metrics
		}
		g := append(slices.Clone(base), label{"groupname", p.Node}, label{"node", p.Node})
		// process-exporter splits user and system; proc.csv has their sum.
		fam.add("namedprocess_namegroup_cpu_seconds_total", render(append(slices.Clone(g), label{"mode", "user+system"})), p.TimeNs, p.CPUSeconds)
		fam.add("namedprocess_namegroup_memory_bytes", render(append(g, label{"memtype", "resident"})), p.TimeNs, float64(p.RSSBytes))
	}
	return nil
}

// hostFamilies adds one machine's load and CPU rows under node_exporter's
// names, with base as its target labels; mem > 0 adds its memory.
func hostFamilies(fam families, base []label, host []rundir.Host, mem int64) {
	machine := render(base)
	for _, h := range host {
		fam.add("node_load1", machine, h.TimeNs, h.Load1)
		fam.add("node_load5", machine, h.TimeNs, h.Load5)
		fam.add("node_load15", machine, h.TimeNs, h.Load15)
		if mem > 0 {
			fam.add("node_memory_MemTotal_bytes", machine, h.TimeNs, float64(mem))
		}
		// host.csv sums all CPUs; node_exporter has one series per CPU and
		// mode. The sums are split evenly over the CPUs, so every stock
		// query (sums by mode, counts of CPUs, 1 - avg(rate(idle)))
		// reads the machine right. Modes: idle holds iowait; user holds
		// user, nice and system (host.csv does not split them).
		n := max(h.CPUs, 1)
		user := h.CPUBusySeconds - h.CPUStealSeconds - h.CPUIRQSeconds
		modes := []struct {
			mode string
			sec  float64
		}{
			{"idle", h.CPUTotalSeconds - h.CPUBusySeconds},
			{"irq", h.CPUIRQSeconds},
			{"steal", h.CPUStealSeconds},
			{"user", user},
		}
		for cpu := range n {
			for _, md := range modes {
				ls := append(slices.Clone(base), label{"cpu", strconv.Itoa(cpu)}, label{"mode", md.mode})
				fam.add("node_cpu_seconds_total", render(ls), h.TimeNs, md.sec/float64(n))
			}
		}
	}
}

// writeFamilies writes every family, sorted by name, each series sorted by
// its labels, then "# EOF".
func writeFamilies(w io.Writer, fam families) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	names := make([]string, 0, len(fam))
	for n := range fam {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if !validName(name) {
			return fmt.Errorf("metric name %q is not a valid OpenMetrics name", name)
		}
		fmt.Fprintf(bw, "# TYPE %s unknown\n", name)
		series := fam[name]
		keys := make([]string, 0, len(series))
		for k := range series {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			pts := series[k]
			slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.ns, b.ns) })
			last := int64(-1)
			for _, p := range pts {
				ms := p.ns / 1e6
				if ms == last {
					continue // Prometheus keeps milliseconds: one point per ms
				}
				last = ms
				bw.WriteString(name)
				bw.WriteString(k)
				bw.WriteByte(' ')
				bw.WriteString(strconv.FormatFloat(p.v, 'g', -1, 64)) // NaN, +Inf, -Inf as OpenMetrics spells them
				bw.WriteByte(' ')
				bw.WriteString(strconv.FormatFloat(float64(ms)/1e3, 'f', 3, 64))
				bw.WriteByte('\n')
			}
		}
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == ':' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// label is one name="value" pair (value unescaped).
type label struct{ name, value string }

// render is the label set in exposition syntax, in the order given.
func render(ls []label) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(promtext.Label(l.name, l.value))
	}
	b.WriteByte('}')
	return b.String()
}

// parseLabels reads a label set in exposition syntax ({a="x",b="y"} or
// empty), values unescaped, in name order (samples.csv.gz keeps them
// sorted): promtext, the parser that wrote them.
func parseLabels(s string) ([]label, error) {
	m, err := promtext.ParseLabels(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	out := make([]label, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, label{k, m[k]})
	}
	return out, nil
}

// withTarget is a sample's labels with the scrape's target labels first
// (job, instance, node, role, zone). A
// label the node itself exported under one of those names is kept as
// exported_NAME, as Prometheus does (honor_labels false).
func withTarget(labels string, t target) (string, error) {
	own, err := parseLabels(labels)
	if err != nil {
		return "", err
	}
	ls := []label{{"job", t.job}}
	if t.instance != "" {
		ls = append(ls, label{"instance", t.instance})
	}
	// node too: a --prometheus run's live scrape labels its targets
	// node=<name> (job "cometbft"), so one dashboard selects both by node.
	ls = append(ls, label{"node", t.job})
	if t.role != "" {
		ls = append(ls, label{"role", t.role})
	}
	if t.zone != "" {
		ls = append(ls, label{"zone", t.zone})
	}
	taken := map[string]bool{}
	for _, l := range ls {
		taken[l.name] = true
	}
	for _, l := range own {
		if taken[l.name] {
			l.name = "exported_" + l.name
		}
		ls = append(ls, l)
	}
	return render(ls), nil
}
