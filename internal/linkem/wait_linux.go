package linkem

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// waiter sleeps the delivery goroutine until a deadline or a wake-up with
// nanosecond resolution. Go's timers sleep in epoll_wait, whose timeout is in
// whole milliseconds, which late-delivers frames by up to ~1 ms; ppoll takes
// a timespec, and the thread's timer slack is set to 1 ns, so wake-ups are
// late by tens of microseconds. The owning goroutine must stay locked to its
// OS thread (see lockThread).
type waiter struct {
	efd int // eventfd: wake() makes it readable
}

func newWaiter() (*waiter, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &waiter{efd: fd}, nil
}

// lockThread pins the calling goroutine to its thread and makes that
// thread's sleeps precise.
func lockThread() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // best effort: only precision suffers
}

// wake interrupts a wait (or makes the next one return at once).
func (w *waiter) wake() {
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, _ = unix.Write(w.efd, one) // EAGAIN: a wake-up is already pending
}

// wait returns when woken or after d (d < 0: only when woken).
func (w *waiter) wait(d time.Duration) {
	fds := []unix.PollFd{{Fd: int32(w.efd), Events: unix.POLLIN}}
	var ts *unix.Timespec
	if d >= 0 {
		t := unix.NsecToTimespec(int64(d))
		ts = &t
	}
	n, err := unix.Ppoll(fds, ts, nil)
	if n > 0 {
		var buf [8]byte
		_, _ = unix.Read(w.efd, buf[:])
	}
	if err != nil && !errors.Is(err, unix.EINTR) {
		time.Sleep(time.Millisecond) // cannot happen with a valid fd; never spin
	}
}

func (w *waiter) close() error { return unix.Close(w.efd) }

func gettid() int { return unix.Gettid() }

// setRealtime puts the calling thread under SCHED_FIFO at the lowest
// real-time priority, so it runs as soon as it wakes whatever ordinary
// (SCHED_OTHER) work keeps the CPUs busy. Reset on fork: nothing it might
// spawn inherits the policy. The kernel's real-time throttling
// (kernel.sched_rt_runtime_us, 95 % by default) still leaves other tasks a
// share should the thread ever spin.
func setRealtime() error {
	return unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO,
		Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: 1}, 0)
}

// threadSched describes how thread tid is scheduled, e.g. "SCHED_FIFO 1"
// or "SCHED_OTHER nice 0" ("" when it cannot be read).
func threadSched(tid int) string {
	if tid <= 0 {
		return ""
	}
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return ""
	}
	switch a.Policy {
	case unix.SCHED_FIFO:
		return fmt.Sprintf("SCHED_FIFO %d", a.Priority)
	case unix.SCHED_RR:
		return fmt.Sprintf("SCHED_RR %d", a.Priority)
	case unix.SCHED_NORMAL:
		return fmt.Sprintf("SCHED_OTHER nice %d", a.Nice)
	}
	return fmt.Sprintf("policy %d nice %d", a.Policy, a.Nice)
}
