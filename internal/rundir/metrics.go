package rundir

import (
	"strconv"
)

// Files under metrics/, written by collect during the run.

// Sample is one row of metrics/samples.csv.gz: one Prometheus series of one
// node at one scrape. Labels are in exposition syntax, sorted
// ({chain_id="x",le="0.5"}); histograms and summaries are flattened to
// _bucket/_sum/_count rows as in the text format.
type Sample struct {
	TimeNs int64
	Node   string
	Metric string
	Labels string
	Value  float64
}

// SamplesCSV is metrics/samples.csv.gz (gzip, sync-flushed every second, so
// a cut file reads up to its last flush).
var SamplesCSV = &CSV[Sample]{
	Name:   Metrics + "/samples.csv.gz",
	Header: []string{"time_ns", "node", "metric", "labels", "value"},
	Gzip:   true,
	encode: func(s *Sample, f []string) {
		f[0], f[1], f[2], f[3], f[4] = i64(s.TimeNs), s.Node, s.Metric, s.Labels, f64(s.Value)
	},
	decode: func(s *Sample, f *fields) {
		s.TimeNs, s.Node, s.Metric, s.Labels = f.Int64(0), f.Sym(1), f.Sym(2), f.Sym(3)
		s.Value, _ = f.Float(4)
	},
}

// HarnessNode names the harness's own row in proc.csv.
const HarnessNode = "benchnet"

// Proc is one row of metrics/proc.csv: one process's memory and CPU time
// (a node's, or the harness's own as node HarnessNode).
type Proc struct {
	TimeNs     int64
	Node       string
	PID        int
	RSSBytes   int64
	CPUSeconds float64 // user + system, cumulative
}

// ProcCSV is metrics/proc.csv.
var ProcCSV = &CSV[Proc]{
	Name:   Metrics + "/proc.csv",
	Header: []string{"time_ns", "node", "pid", "rss_bytes", "cpu_seconds"},
	encode: func(p *Proc, f []string) {
		f[0], f[1], f[2], f[3], f[4] = i64(p.TimeNs), p.Node, strconv.Itoa(p.PID), i64(p.RSSBytes), f64(p.CPUSeconds)
	},
	decode: func(p *Proc, f *fields) {
		p.TimeNs, p.Node, p.PID, p.RSSBytes = f.Int64(0), f.Sym(1), f.Int(2), f.Int64(3)
		p.CPUSeconds, _ = f.Float(4)
	},
}

// Host is one row of metrics/host.csv: the machine's load and cumulative
// CPU time over all CPUs.
type Host struct {
	TimeNs               int64
	Load1, Load5, Load15 float64
	CPUBusySeconds       float64 // all CPU time but idle and iowait (steal included)
	CPUTotalSeconds      float64
	CPUs                 int
	// CPUStealSeconds is the steal time within CPUBusySeconds: time a
	// virtual CPU wanted to run while the hypervisor ran someone else.
	// Files written before it existed read 0.
	CPUStealSeconds float64
	// CPUIRQSeconds is the irq and softirq time within CPUBusySeconds: the
	// kernel's interrupt work (network receive on the veths among it),
	// charged to no process. Files written before it existed read 0.
	CPUIRQSeconds float64
}

var hostColumns = []string{"time_ns", "load1", "load5", "load15", "cpu_busy_seconds", "cpu_total_seconds", "cpus", "cpu_steal_seconds", "cpu_irq_seconds"}

// HostCSV is metrics/host.csv.
var HostCSV = &CSV[Host]{
	Name:     Metrics + "/host.csv",
	Header:   hostColumns,
	Optional: []string{"cpu_steal_seconds", "cpu_irq_seconds"},
	encode:   encodeHost,
	decode:   func(h *Host, f *fields) { decodeHost(h, f, 0) },
}

func encodeHost(h *Host, f []string) {
	f[0], f[1], f[2], f[3] = i64(h.TimeNs), f64(h.Load1), f64(h.Load5), f64(h.Load15)
	f[4], f[5], f[6], f[7] = f64(h.CPUBusySeconds), f64(h.CPUTotalSeconds), strconv.Itoa(h.CPUs), f64(h.CPUStealSeconds)
	f[8] = f64(h.CPUIRQSeconds)
}

// decodeHost reads a Host from the columns starting at o.
func decodeHost(h *Host, f *fields, o int) {
	h.TimeNs = f.Int64(o)
	h.Load1, _ = f.Float(o + 1)
	h.Load5, _ = f.Float(o + 2)
	h.Load15, _ = f.Float(o + 3)
	h.CPUBusySeconds, _ = f.Float(o + 4)
	h.CPUTotalSeconds, _ = f.Float(o + 5)
	h.CPUs = f.Int(o + 6)
	h.CPUStealSeconds, _ = f.Float(o + 7)
	h.CPUIRQSeconds, _ = f.Float(o + 8)
}

// MachineLoad is one row of metrics/machines.csv: one machine's load and
// CPU time as its exporter reported it, on a runner whose nodes run on
// several machines (swarm). host.csv stays the harness's own machine, which
// the testbed checks read; these rows are each machine's own series.
type MachineLoad struct {
	Machine string // the cluster's name for it (a swarm node's hostname)
	Host
}

// MachinesCSV is metrics/machines.csv.
var MachinesCSV = &CSV[MachineLoad]{
	Name:   Metrics + "/machines.csv",
	Header: append([]string{"machine"}, hostColumns...),
	encode: func(m *MachineLoad, f []string) {
		f[0] = m.Machine
		encodeHost(&m.Host, f[1:])
	},
	decode: func(m *MachineLoad, f *fields) {
		m.Machine = f.Sym(0)
		decodeHost(&m.Host, f, 1)
	},
}

// ScrapeError is one row of metrics/scrape_errors.csv: a failed scrape or
// /proc read.
type ScrapeError struct {
	TimeNs int64
	Node   string
	Source string // metrics, proc, machine
	Error  string
}

// ScrapeErrorsCSV is metrics/scrape_errors.csv.
var ScrapeErrorsCSV = &CSV[ScrapeError]{
	Name:   Metrics + "/scrape_errors.csv",
	Header: []string{"time_ns", "node", "source", "error"},
	encode: func(e *ScrapeError, f []string) { f[0], f[1], f[2], f[3] = i64(e.TimeNs), e.Node, e.Source, e.Error },
	decode: func(e *ScrapeError, f *fields) {
		e.TimeNs, e.Node, e.Source, e.Error = f.Int64(0), f.Sym(1), f.Sym(2), f.Str(3)
	},
}

// MachineFile is metrics/machine.json.
const MachineFile = Metrics + "/machine.json"

// Machine is metrics/machine.json: the machine a run ran on.
type Machine struct {
	Hostname    string `json:"hostname"`
	Kernel      string `json:"kernel"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	MemoryBytes int64  `json:"memory_bytes"`
	// Governor is cpu0's cpufreq scaling_governor (absent where /sys does
	// not show one: most containers and VMs).
	Governor  string `json:"governor,omitempty"`
	GoVersion string `json:"go_version"` // of the harness
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// ReadMachine reads metrics/machine.json.
func (d *Dir) ReadMachine() (*Machine, error) {
	var m Machine
	if err := d.ReadJSON(MachineFile, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// WriteMachine writes metrics/machine.json.
func (d *Dir) WriteMachine(m *Machine) error { return d.WriteJSON(MachineFile, m) }
