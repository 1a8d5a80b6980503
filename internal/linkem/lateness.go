package linkem

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// The userspace switch certifies itself: for every delayed frame it records
// how late the delivery thread handed it to the destination TAP compared
// with its scheduled time, in a fixed histogram of log-spaced buckets. Four
// buckets per octave (each at most 25 % wider than the previous bound) from
// 1.024 µs to 2^34 ns ≈ 17 s: recording is a bits.Len64 and three atomic adds,
// no allocation, no float math on the forwarding path.
const (
	latSub     = 4  // buckets per octave: two mantissa bits
	latMinExp  = 10 // bucket 0 holds lateness ≤ 2^10 ns
	latMaxExp  = 34 // the last bounded bucket ends at 2^34 ns
	LatBuckets = (latMaxExp-latMinExp)*latSub + 2
)

// latBucket returns the index of the bucket holding v ns: bucket i holds
// (LatUpper(i-1), LatUpper(i)], the last one everything above 2^34 ns.
func latBucket(v int64) int {
	if v <= 1<<latMinExp {
		return 0
	}
	w := uint64(v - 1)
	e := bits.Len64(w) - 1 // w in [2^e, 2^(e+1))
	if e >= latMaxExp {
		return LatBuckets - 1
	}
	m := int(w>>(e-2)) & 3
	return 1 + (e-latMinExp)*latSub + m
}

// LatUpper is the inclusive upper bound of bucket i in ns (MaxInt64 for the
// overflow bucket).
func LatUpper(i int) int64 {
	switch {
	case i <= 0:
		return 1 << latMinExp
	case i >= LatBuckets-1:
		return math.MaxInt64
	}
	e := latMinExp + (i-1)/latSub
	m := int64((i - 1) % latSub)
	return (int64(1) << (e - 2)) * (5 + m)
}

// LatHist is a live lateness histogram (the switch's, the NFQUEUE agent's).
// One goroutine writes (the delivery loop); any goroutine may read, hence
// the atomics. The zero value is ready.
type LatHist struct {
	counts   [LatBuckets]atomic.Uint64
	frames   atomic.Uint64
	sum      atomic.Uint64 // ns
	max      atomic.Int64  // ns, since the switch started
	interval atomic.Int64  // ns, max since the recorder last took it
}

// Observe records one lateness in ns (negative counts as 0).
func (h *LatHist) Observe(late int64) {
	late = max(late, 0)
	h.counts[latBucket(late)].Add(1)
	h.frames.Add(1)
	h.sum.Add(uint64(late))
	if late > h.max.Load() {
		h.max.Store(late) // single writer
	}
	// The recorder swaps interval to 0 concurrently: CAS so that a frame
	// recorded across the swap is not lost from the next interval's max.
	for {
		old := h.interval.Load()
		if late <= old || h.interval.CompareAndSwap(old, late) {
			break
		}
	}
}

// Snapshot copies the histogram. Counters are read one by one while frames
// are recorded, so Frames may differ from the sum of Counts by the few frames
// recorded meanwhile; quantiles use Counts only.
func (h *LatHist) Snapshot() Lateness {
	l := Lateness{Counts: make([]uint64, LatBuckets)}
	l.Frames = h.frames.Load()
	for i := range h.counts {
		l.Counts[i] = h.counts[i].Load()
	}
	l.Sum = time.Duration(h.sum.Load())
	l.Max = time.Duration(h.max.Load())
	return l
}

// Lateness is a lateness histogram: the whole life of a switch (Userspace.
// Lateness) or a window of it (Sub).
type Lateness struct {
	Frames uint64
	Sum    time.Duration
	// Max is exact (not a bucket bound).
	Max time.Duration
	// Counts[i] is the number of frames in bucket i (not cumulative).
	Counts []uint64
}

// Lateness returns how late the switch has delivered delayed frames since it
// started.
func (u *Userspace) Lateness() Lateness { return u.late.Snapshot() }

// Sub is the histogram of the frames recorded after earlier (a snapshot of
// the same switch). Max cannot be subtracted: it stays the later one's, an
// upper bound; the recorded series keeps a max per interval instead.
func (l Lateness) Sub(earlier Lateness) Lateness {
	out := Lateness{Frames: l.Frames - earlier.Frames, Sum: l.Sum - earlier.Sum, Max: l.Max, Counts: make([]uint64, LatBuckets)}
	for i := range out.Counts {
		var a, b uint64
		if i < len(l.Counts) {
			a = l.Counts[i]
		}
		if i < len(earlier.Counts) {
			b = earlier.Counts[i]
		}
		if a > b {
			out.Counts[i] = a - b
		}
	}
	return out
}

// Quantile estimates the q-quantile (0 < q ≤ 1) by linear interpolation
// inside its bucket, capped at Max: within 25 % of the true value, exact at
// the top. Zero when no frame was recorded.
func (l Lateness) Quantile(q float64) time.Duration {
	var n uint64
	for _, c := range l.Counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := q * float64(n) // the rank-th smallest frame, 1-based
	var below uint64
	for i, c := range l.Counts {
		if c == 0 || float64(below+c) < rank {
			below += c
			continue
		}
		lo, hi := int64(0), LatUpper(i)
		if i > 0 {
			lo = LatUpper(i - 1)
		}
		if hi == math.MaxInt64 || (l.Max > 0 && hi > int64(l.Max)) {
			hi = max(int64(l.Max), lo)
		}
		frac := (rank - float64(below)) / float64(c)
		v := time.Duration(float64(lo) + frac*float64(hi-lo))
		if l.Max > 0 {
			v = min(v, l.Max)
		}
		return v
	}
	return l.Max
}

// Mean is the average lateness.
func (l Lateness) Mean() time.Duration {
	if l.Frames == 0 {
		return 0
	}
	return l.Sum / time.Duration(l.Frames)
}

// Lateness bound. The emulator is accurate enough when the p99 of its
// lateness over the measured window is at most
//
//	max(LatenessFloor, LatenessFraction × the smallest nonzero configured one-way delay).
//
// Lateness adds to every emulated delay, so relative to the delays it is what
// the emulation gets wrong: 2 % of the shortest link keeps each pair within
// the accuracy the zone tests ask of the emulated RTT. The 1 ms floor is
// what the switch can promise on a shared machine at all (Go's own timers
// sleep in whole milliseconds, which is why the delivery thread sleeps in
// ppoll), and it is below 0.1 % of a CometBFT tx latency (about a second),
// so a run whose links are all short is not declared invalid for noise that
// cannot move its results. The p99, not the max, is bounded: one frame held
// up by a page fault moves no latency percentile; the max is reported next
// to it.
const (
	LatenessFloor    = time.Millisecond
	LatenessFraction = 0.02
)

// LatenessBound is the p99 lateness allowed when the smallest nonzero
// configured delay is minDelay (0: no delay configured).
func LatenessBound(minDelay time.Duration) time.Duration {
	return max(LatenessFloor, time.Duration(LatenessFraction*float64(minDelay)))
}

// minNonzeroDelay is the smallest nonzero one-way delay between two
// different nodes of s, 0 when there is none.
func minNonzeroDelay(s *Snapshot) time.Duration {
	var d time.Duration
	for i, row := range s.Links {
		for j, l := range row {
			if i != j && l.Delay > 0 && (d == 0 || l.Delay < d) {
				d = l.Delay
			}
		}
	}
	return d
}

// TakeIntervalMax returns the largest lateness since the last call (ns)
// and starts a new interval: the recorded series' per-line max.
func (h *LatHist) TakeIntervalMax() int64 { return h.interval.Swap(0) }

// SampleOf is a lateness record line of l at t (trailing empty buckets
// left out): what the switch's recorder writes, and what the NFQUEUE agent
// serves for the harness to merge into the run's record.
func SampleOf(t time.Time, l Lateness, intervalMax, minDelay int64, sched string) rundir.LinkemLatenessSample {
	n := len(l.Counts)
	for n > 0 && l.Counts[n-1] == 0 {
		n--
	}
	return rundir.LinkemLatenessSample{Time: t.UTC(), Frames: l.Frames, SumNs: int64(l.Sum), MaxNs: intervalMax,
		MinDelayNs: minDelay, Sched: sched, Counts: slices.Clone(l.Counts[:n])}
}
