// Package linkemtest wires a userspace switch to real network namespaces for
// tests and benchmarks: one namespace per endpoint, its TAP moved in, renamed
// eth0 and addressed — the same steps the local runner takes.
package linkemtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/linkem"
)

// Lab is a set of namespaces attached to one switch.
type Lab struct {
	// Netns maps an endpoint name to its namespace.
	Netns map[string]string
	made  []string
}

// Setup creates a namespace "bnt-<random>-<i>" per endpoint, adds a port for
// it on u and configures it (eth0 with addr/bits, lo up). On error it removes
// what it made; otherwise the caller must call Close (register it first).
func Setup(ctx context.Context, u *linkem.Userspace, eps []linkem.Endpoint, bits int) (*Lab, error) {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	l := &Lab{Netns: map[string]string{}}
	for i, ep := range eps {
		ns := fmt.Sprintf("bnt-%s-%d", hex.EncodeToString(suffix), i)
		if err := Run(ctx, "ip", "netns", "add", ns); err != nil {
			l.Close()
			return nil, err
		}
		l.made = append(l.made, ns)
		l.Netns[ep.Name] = ns
		tap, err := u.AddPort(ep.Name)
		if err != nil {
			l.Close()
			return nil, err
		}
		pfx := netip.PrefixFrom(ep.Addr, bits).String()
		for _, argv := range [][]string{
			{"ip", "link", "set", tap, "netns", ns},
			{"ip", "-n", ns, "link", "set", tap, "name", "eth0"},
			{"ip", "-n", ns, "addr", "add", pfx, "dev", "eth0"},
			{"ip", "-n", ns, "link", "set", "eth0", "up"},
			{"ip", "-n", ns, "link", "set", "lo", "up"},
		} {
			if err := Run(ctx, argv...); err != nil {
				l.Close()
				return nil, fmt.Errorf("set up %s: %w", ep.Name, err)
			}
		}
	}
	return l, nil
}

// Close deletes every namespace Setup made (their TAP devices go with them).
func (l *Lab) Close() error {
	var errs []error
	for _, ns := range l.made {
		if err := Run(context.Background(), "ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	l.made = nil
	return errors.Join(errs...)
}

// Run execs argv without a shell; the error carries the output.
func Run(ctx context.Context, argv ...string) error {
	_, err := Output(ctx, argv...)
	return err
}

// Output execs argv without a shell and returns stdout and stderr together.
func Output(ctx context.Context, argv ...string) (string, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return buf.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(buf.String()))
	}
	return buf.String(), nil
}

// Hog starves the OS thread tid (e.g. the switch's delivery thread, see
// Userspace.DeliveryThread) with n spinning processes (`yes` writing to
// /dev/null): tid and the hogs are pinned to the machine's last CPU and tid
// becomes an ordinary thread at nice 19 (whatever its policy was, e.g.
// SCHED_FIFO), so each hog outweighs it about 70 to 1 (CFS/EEVDF weights
// 1024 vs 15) while everything else on that CPU (softirq threads, the other
// threads of this process) competes with the hogs as equals. Stop kills and
// reaps the hogs and restores tid's scheduling and affinity.
func Hog(ctx context.Context, tid, n int) (stop func() error, err error) {
	if tid <= 0 {
		return nil, fmt.Errorf("hog: no thread to starve (tid %d)", tid)
	}
	var all, one unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &all); err != nil {
		return nil, fmt.Errorf("hog: affinity of thread %d: %w", tid, err)
	}
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return nil, fmt.Errorf("hog: scheduling of thread %d: %w", tid, err)
	}
	one.Set(runtime.NumCPU() - 1)
	var cmds []*exec.Cmd
	stop = func() error {
		var errs []error
		for _, c := range cmds {
			_ = c.Process.Kill()
			if err := c.Wait(); err != nil && !isKilled(err) {
				errs = append(errs, err)
			}
		}
		cmds = nil
		errs = append(errs, unix.SchedSetAttr(tid, attr, 0), unix.SchedSetaffinity(tid, &all))
		return errors.Join(errs...)
	}
	if err := unix.SchedSetaffinity(tid, &one); err != nil {
		return nil, fmt.Errorf("hog: pin thread %d: %w", tid, err)
	}
	if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: 19}, 0); err != nil {
		_ = stop()
		return nil, fmt.Errorf("hog: nice thread %d: %w", tid, err)
	}
	for range n {
		c := exec.CommandContext(ctx, "yes") // stdout: /dev/null
		if err := c.Start(); err != nil {
			_ = stop()
			return nil, fmt.Errorf("hog: %w", err)
		}
		cmds = append(cmds, c)
		if err := unix.SchedSetaffinity(c.Process.Pid, &one); err != nil {
			_ = stop()
			return nil, fmt.Errorf("hog: pin %d: %w", c.Process.Pid, err)
		}
	}
	return stop, nil
}

func isKilled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && !ee.Exited()
}
