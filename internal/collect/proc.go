package collect

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// clkTck is USER_HZ, the unit of the tick counts in /proc/<pid>/stat and
// /proc/stat. The kernel exports it as 100 on every architecture Linux
// reports to user space (it is fixed by the ABI, independent of CONFIG_HZ),
// so no cgo sysconf call is needed.
const clkTck = 100

// Proc is one process's resource use.
type Proc struct {
	RSSBytes   int64   // VmRSS
	CPUSeconds float64 // utime + stime
}

// ReadProc reads a process's RSS (from /proc/<pid>/status) and CPU time
// (from /proc/<pid>/stat).
func ReadProc(pid int) (Proc, error) {
	return readProc("/proc", pid)
}

// ReadProcTree is ReadProc summed over pid and its descendants: a node
// that runs under a wrapper (the swarm runner's link agent, whose child
// the node is) is the whole tree; the wrapper's share is the run's own,
// as the userspace switch's is the harness's on local. A descendant that
// exits between the listing and its read is left out.
func ReadProcTree(pid int) (Proc, error) {
	return readProcTree("/proc", pid)
}

func readProcTree(root string, pid int) (Proc, error) {
	p, err := readProc(root, pid)
	if err != nil {
		return p, err
	}
	queue := children(root, pid)
	for seen := 0; len(queue) > 0 && seen < maxTree; seen++ {
		c := queue[0]
		queue = queue[1:]
		q, err := readProc(root, c)
		if err != nil {
			continue
		}
		p.CPUSeconds += q.CPUSeconds
		p.RSSBytes += q.RSSBytes
		queue = append(queue, children(root, c)...)
	}
	return p, nil
}

// maxTree bounds the descendants read per process tree.
const maxTree = 64

// children lists pid's child processes from every thread's children file
// (CONFIG_PROC_CHILDREN; none without it).
func children(root string, pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("%s/%d/task", root, pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d/task/%s/children", root, pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func readProc(root string, pid int) (Proc, error) {
	var p Proc
	stat, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", root, pid))
	if err != nil {
		return p, fmt.Errorf("read proc stat: %w", err)
	}
	if p.CPUSeconds, err = parseProcStat(stat); err != nil {
		return p, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("%s/%d/status", root, pid))
	if err != nil {
		return p, fmt.Errorf("read proc status: %w", err)
	}
	if p.RSSBytes, err = parseVmRSS(status); err != nil {
		return p, fmt.Errorf("pid %d: %w", pid, err)
	}
	return p, nil
}

// parseProcStat returns utime+stime in seconds. The command name (field 2)
// may contain spaces and parentheses, so fields are counted after the last ')'.
func parseProcStat(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command, want >= 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("stat: utime %q stime %q", f[11], f[12])
	}
	return float64(ut+st) / clkTck, nil
}

// parseVmRSS reads "VmRSS:   1234 kB". A zombie has no VmRSS line: 0.
func parseVmRSS(b []byte) (int64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("status: VmRSS %q", v)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status: VmRSS %q: %w", v, err)
		}
		return kb * 1024, nil
	}
	return 0, nil
}

// ReadHost reads /proc/loadavg and the aggregate line of /proc/stat.
func ReadHost() (rundir.Host, error) {
	var h rundir.Host
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return h, fmt.Errorf("read loadavg: %w", err)
	}
	f := strings.Fields(string(la))
	if len(f) < 3 {
		return h, fmt.Errorf("loadavg: %q", la)
	}
	for i, dst := range []*float64{&h.Load1, &h.Load5, &h.Load15} {
		if *dst, err = strconv.ParseFloat(f[i], 64); err != nil {
			return h, fmt.Errorf("loadavg: %w", err)
		}
	}
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return h, fmt.Errorf("read stat: %w", err)
	}
	if h.CPUBusySeconds, h.CPUTotalSeconds, h.CPUStealSeconds, h.CPUIRQSeconds, h.CPUs, err = ParseStat(st); err != nil {
		return h, err
	}
	return h, nil
}

// ParseStat sums the "cpu" line of /proc/stat: user nice system idle iowait
// irq softirq steal (guest time is already within user/nice). busy is all
// but idle and iowait, steal included (as host.csv always had it); steal is
// also returned alone, since it is CPU time the machine did not get, and so
// is irq+softirq, the kernel's interrupt work that no process is charged for.
func ParseStat(b []byte) (busy, total, steal, irq float64, cpus int, err error) {
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cpus++
			continue
		}
		found = true
		for i := 1; i < len(f) && i <= 8; i++ {
			v, perr := strconv.ParseUint(f[i], 10, 64)
			if perr != nil {
				return 0, 0, 0, 0, 0, fmt.Errorf("stat: cpu field %d %q", i, f[i])
			}
			total += float64(v)
			if i != 4 && i != 5 { // idle, iowait
				busy += float64(v)
			}
			switch i {
			case 6, 7: // irq, softirq
				irq += float64(v)
			case 8:
				steal = float64(v)
			}
		}
	}
	if !found {
		return 0, 0, 0, 0, 0, fmt.Errorf("stat: no cpu line")
	}
	return busy / clkTck, total / clkTck, steal / clkTck, irq / clkTck, cpus, nil
}

// ReadMachine reads the machine description from /proc.
func ReadMachine() rundir.Machine {
	m := rundir.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); err == nil {
		m.Governor = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) == 2 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					m.MemoryBytes = kb * 1024
				}
			}
		}
	}
	return m
}

// WriteMachine writes metrics/machine.json.
func WriteMachine(dir *rundir.Dir) error {
	m := ReadMachine()
	return dir.WriteMachine(&m)
}
