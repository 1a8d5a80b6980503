// Package osched holds the few scheduling knobs the harness uses so that it
// is the last thing on the machine to starve: a precise, real-time thread for
// time-critical loops (the link emulator's delivery, the load's pacing) and a
// lower CPU priority for the processes under test.
package osched

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// LockThread pins the calling goroutine to its OS thread and sets that
// thread's timer slack to 1 ns, so its sleeps wake within tens of
// microseconds instead of the default 50 µs slack. Callers never unlock: the
// thread dies with the goroutine, so its slack and policy serve no other.
func LockThread() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // best effort: only precision suffers
}

// SetRealtime puts the calling thread under SCHED_FIFO at the lowest
// real-time priority, so it runs as soon as it wakes whatever ordinary
// (SCHED_OTHER) work keeps the CPUs busy. Reset on fork: nothing it might
// spawn inherits the policy. The kernel's real-time throttling
// (kernel.sched_rt_runtime_us, 95 % by default) still leaves other tasks a
// share should the thread ever spin. Needs CAP_SYS_NICE (root).
func SetRealtime() error {
	return unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO,
		Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: 1}, 0)
}

// Gettid is the calling thread's id.
func Gettid() int { return unix.Gettid() }

// ThreadSched describes how thread tid is scheduled, e.g. "SCHED_FIFO 1"
// or "SCHED_OTHER nice 0" ("" when it cannot be read).
func ThreadSched(tid int) string {
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

// NiceGroup sets the nice value of every thread of every process in process
// group pgid (setpriority(2) with PRIO_PGRP walks all their threads); threads
// created later inherit it from their creator.
func NiceGroup(pgid, nice int) error {
	if err := unix.Setpriority(unix.PRIO_PGRP, pgid, nice); err != nil {
		return fmt.Errorf("nice %d process group %d: %w", nice, pgid, err)
	}
	return nil
}
