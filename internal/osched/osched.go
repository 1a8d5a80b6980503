// Package osched holds the few scheduling knobs the harness uses so that it
// is the last thing on the machine to starve: a precise, real-time thread for
// time-critical loops (the link emulator's delivery, the load's pacing) and a
// lower CPU priority for the processes under test.
package osched

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

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

// RaiseProcess sets the nice value of every thread of this process to nice
// (setpriority(2) on Linux acts on one thread, so it walks
// /proc/self/task); threads the Go runtime creates later inherit it from
// the thread that creates them, which by then is one of these. A negative
// value makes the harness's ordinary threads (the Go scheduler's, the
// websocket readers, the collectors) win the CPU against neighbours at
// nice 0 and nodes at NodeNice: a real-time pacing thread still waits for
// one of them whenever the Go scheduler hands it its goroutine back.
// Needs CAP_SYS_NICE for a negative value; it returns the first error and
// sets what it can.
func RaiseProcess(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("nice %d: %w", nice, err)
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && first == nil && !errors.Is(err, unix.ESRCH) {
			first = fmt.Errorf("nice %d thread %d: %w", nice, tid, err)
		}
	}
	return first
}

// Nice is the calling thread's nice value.
func Nice() (int, error) {
	// getpriority(2) returns 20-nice for the raw system call.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}
