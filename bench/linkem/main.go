// Command linkem benchmarks the userspace link emulator between two real
// network namespaces (root needed):
//
//   - added-delay error: how late the switch wrote each delayed frame (its
//     own lateness record, checked against its bound as a run's analysis
//     does) and ping RTT vs 2× the delay, on the machine as it is and with
//     the delivery thread starved by pinned CPU hogs (linkemtest.Hog);
//   - forwarding rate: UDP flood A→B over a zero-delay link (frames written
//     straight from the reader) and over a 1 ms link (through the delay heap).
//
// Usage: go run ./bench/linkem [-delay 20ms] [-flood 3s] [-hogs 2]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/linkemtest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func main() {
	delay := flag.Duration("delay", 20*time.Millisecond, "one-way delay for the error measurement")
	flood := flag.Duration("flood", 3*time.Second, "duration of each UDP flood")
	hogs := flag.Int("hogs", 2, "spinning processes beside the delivery thread for the starved measurement (0: skip it)")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench/linkem: needs root (network namespaces, TAP devices)")
		os.Exit(2)
	}
	if err := run(*delay, *flood, *hogs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/linkem:", err)
		os.Exit(1)
	}
}

func run(delay, flood time.Duration, hogs int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eps := []linkem.Endpoint{
		{Name: "a", Zone: "za", Addr: netip.MustParseAddr("10.213.252.2")},
		{Name: "b", Zone: "zb", Addr: netip.MustParseAddr("10.213.252.3")},
	}
	m, err := linkem.New(eps, nil, func(_, _ linkem.Endpoint) linkem.Link { return linkem.Link{Delay: delay} }, 1)
	if err != nil {
		return err
	}
	rec, err := os.MkdirTemp("", "bench-linkem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(rec)
	u, err := linkem.NewUserspace(linkem.UserspaceConfig{RecordDir: rec, RecordEvery: 100 * time.Millisecond, Realtime: true})
	if err != nil {
		return err
	}
	defer u.Close()
	lab, err := linkemtest.Setup(ctx, u, eps, 24)
	if err != nil {
		return err
	}
	defer lab.Close()
	if err := u.Apply(ctx, m); err != nil {
		return err
	}
	fmt.Printf("machine: %d CPUs, load %s", runtime.NumCPU(), loadavg())

	// 1. Added-delay error.
	if _, err := linkemtest.Output(ctx, "ip", "netns", "exec", lab.Netns["a"], "ping", "-c", "2", "-W", "2", "10.213.252.3"); err != nil {
		return fmt.Errorf("warm-up ping: %w", err)
	}
	if err := measureDelay(ctx, lab, u, rec, delay, 0); err != nil { // real-time thread, as in a run
		return err
	}
	if err := ordinary(u.DeliveryThread(), func() error { return measureDelay(ctx, lab, u, rec, delay, 0) }); err != nil {
		return err
	}
	if hogs > 0 {
		if err := measureDelay(ctx, lab, u, rec, delay, hogs); err != nil {
			return err
		}
	}

	// 2. Forwarding rate.
	for _, d := range []time.Duration{0, time.Millisecond} {
		if err := m.SetLink("a", "b", linkem.Link{Delay: d}); err != nil {
			return err
		}
		if err := u.Apply(ctx, m); err != nil {
			return err
		}
		sent, fwd, secs, err := udpFlood(lab, u, flood)
		if err != nil {
			return err
		}
		fmt.Printf("UDP flood a→b (64-byte payload), delay %v: sent %.0f pkt/s, switch forwarded %.0f pkt/s (%.1f%%)\n",
			d, float64(sent)/secs, float64(fwd)/secs, 100*float64(fwd)/float64(max(sent, 1)))
	}
	return nil
}

// ordinary runs fn with the delivery thread made an ordinary thread
// (SCHED_OTHER, nice 0), as it is without UserspaceConfig.Realtime.
func ordinary(tid int, fn func() error) error {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return err
	}
	if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0); err != nil {
		return err
	}
	ferr := fn()
	return errors.Join(ferr, unix.SchedSetAttr(tid, attr, 0))
}

// measureDelay pings a→b 500 times, 10 ms apart, with hogs spinning beside
// the delivery thread, and prints the switch's lateness over the pings (from
// its own record, checked as a run's analysis checks it) and the ping RTTs.
func measureDelay(ctx context.Context, lab *linkemtest.Lab, u *linkem.Userspace, rec string, delay time.Duration, hogs int) error {
	what := "unstarved (machine as it is)"
	stop := func() error { return nil }
	if hogs > 0 {
		var err error
		if stop, err = linkemtest.Hog(ctx, u.DeliveryThread(), hogs); err != nil {
			return err
		}
		defer stop() //nolint:errcheck // stopped below; this covers an early return
		what = fmt.Sprintf("starved (%d hogs pinned beside the delivery thread)", hogs)
	}
	from := time.Now()
	out, _ := linkemtest.Output(ctx, "ip", "netns", "exec", lab.Netns["a"], "ping", "-n", "-c", "500", "-i", "0.01", "10.213.252.3")
	to := time.Now()
	if err := stop(); err != nil {
		return fmt.Errorf("stop hogs: %w", err)
	}
	time.Sleep(250 * time.Millisecond) // a record line after the window
	var rtt []time.Duration
	for _, mm := range regexp.MustCompile(`time=([\d.]+) ms`).FindAllStringSubmatch(out, -1) {
		f, _ := strconv.ParseFloat(mm[1], 64)
		rtt = append(rtt, time.Duration(f*float64(time.Millisecond))-2*delay)
	}
	series, _, err := rundir.LinkemLatenessSeries.ReadFile(filepath.Join(rec, rundir.LinkemLatenessSeriesFile))
	if err != nil {
		return err
	}
	c := linkem.CheckLateness(series, from, to, "pings")
	fmt.Printf("%s, delivery thread %s, delay %v one-way:\n  switch lateness: %s\n", what, c.Sched, delay, c.Verdict)
	fmt.Printf("  ping RTT − 2×%v over %d replies: p50 %v p99 %v max %v (includes both kernels' stacks and the TAP readers)\n",
		delay, len(rtt), pct(rtt, 50), pct(rtt, 99), pct(rtt, 100))
	return nil
}

// udpFlood sends UDP datagrams from a to b as fast as one goroutine can for
// dur and returns datagrams sent and frames the switch forwarded a→b.
func udpFlood(lab *linkemtest.Lab, u *linkem.Userspace, dur time.Duration) (sent, fwd uint64, secs float64, err error) {
	var rx *net.UDPConn
	if err := inNetns(lab.Netns["b"], func() (err error) {
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(10, 213, 252, 3), Port: 9000})
		return err
	}); err != nil {
		return 0, 0, 0, fmt.Errorf("receiver: %w", err)
	}
	defer rx.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
		}
	}()
	var tx *net.UDPConn
	if err := inNetns(lab.Netns["a"], func() (err error) {
		tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(10, 213, 252, 3), Port: 9000})
		return err
	}); err != nil {
		return 0, 0, 0, fmt.Errorf("sender: %w", err)
	}
	defer tx.Close()
	before := fwdOf(u, "a")
	payload := make([]byte, 64)
	start := time.Now()
	for time.Since(start) < dur {
		for range 256 {
			if _, err := tx.Write(payload); err == nil {
				sent++
			}
		}
	}
	secs = time.Since(start).Seconds()
	time.Sleep(50 * time.Millisecond) // frames still in the delay heap
	return sent, fwdOf(u, "a") - before, secs, nil
}

func fwdOf(u *linkem.Userspace, port string) uint64 {
	for _, s := range u.Stats() {
		if s.Port == port {
			return s.ForwardedPackets
		}
	}
	return 0
}

// inNetns runs fn on a thread switched into namespace ns; sockets fn
// creates stay in ns. The thread is thrown away if it cannot switch back.
func inNetns(ns string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("setns %s: %w", ns, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns back: %w", err) // stays locked: the runtime retires the thread
	}
	runtime.UnlockOSThread()
	return ferr
}

func pct(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := min(len(s)*p/100, len(s)-1)
	return s[i].Round(time.Microsecond)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}
