package linkem

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/osched"
)

// Waiter sleeps a delivery goroutine until a deadline or a wake-up with
// nanosecond resolution. Go's timers sleep in epoll_wait, whose timeout is in
// whole milliseconds, which late-delivers frames by up to ~1 ms; ppoll takes
// a timespec, and the thread's timer slack is set to 1 ns, so wake-ups are
// late by tens of microseconds. The owning goroutine must stay locked to its
// OS thread (see lockThread).
type Waiter struct {
	efd int // eventfd: wake() makes it readable
}

// NewWaiter opens the waiter's eventfd; Close it.
func NewWaiter() (*Waiter, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &Waiter{efd: fd}, nil
}

// lockThread pins the calling goroutine to its thread and makes that
// thread's sleeps precise.
func lockThread() { osched.LockThread() }

// Wake interrupts a Wait (or makes the next one return at once).
func (w *Waiter) Wake() {
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, _ = unix.Write(w.efd, one) // EAGAIN: a wake-up is already pending
}

// Wait returns when woken or after d (d < 0: only when woken).
func (w *Waiter) Wait(d time.Duration) {
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

// Close closes the eventfd.
func (w *Waiter) Close() error { return unix.Close(w.efd) }

func gettid() int { return osched.Gettid() }

func setRealtime() error { return osched.SetRealtime() }

func threadSched(tid int) string { return osched.ThreadSched(tid) }
