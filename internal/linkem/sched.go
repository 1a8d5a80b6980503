package linkem

import "sync"

// Scheduler is a min-heap of values ordered by due time (FIFO among equal
// times), serviced by one goroutine: O(log n) per value, no timer per packet
// and no allocation once the heap has grown. The userspace switch holds its
// delayed frame copies in one; the NFQUEUE agent (linkem/nfq) its held
// verdicts.
type Scheduler[T any] struct {
	mu  sync.Mutex
	h   []Due[T]
	seq uint64
	// Wake wakes the servicing goroutine: Push calls it when the new value
	// is the earliest, since that goroutine may sleep until a later time.
	Wake func()
}

// Due is one scheduled value.
type Due[T any] struct {
	At  int64 // due time, ns on the owner's clock
	seq uint64
	V   T
}

// Push schedules v at at.
func (s *Scheduler[T]) Push(at int64, v T) {
	s.mu.Lock()
	s.seq++
	s.h = append(s.h, Due[T]{At: at, seq: s.seq, V: v})
	s.up(len(s.h) - 1)
	first := s.h[0].seq == s.seq
	s.mu.Unlock()
	if first && s.Wake != nil {
		s.Wake()
	}
}

// Len is the number of values waiting.
func (s *Scheduler[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.h)
}

// PopDue appends every value due at now to out and returns the time of the
// next one (ok false when none is left).
func (s *Scheduler[T]) PopDue(now int64, out []Due[T]) (due []Due[T], next int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.h) > 0 && s.h[0].At <= now {
		out = append(out, s.h[0])
		n := len(s.h) - 1
		s.h[0] = s.h[n]
		s.h[n] = Due[T]{} // drop the reference for the GC
		s.h = s.h[:n]
		s.down(0)
	}
	if len(s.h) > 0 {
		return out, s.h[0].At, true
	}
	return out, 0, false
}

func (s *Scheduler[T]) less(i, j int) bool {
	a, b := &s.h[i], &s.h[j]
	return a.At < b.At || a.At == b.At && a.seq < b.seq
}

func (s *Scheduler[T]) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !s.less(j, i) {
			return
		}
		s.h[i], s.h[j] = s.h[j], s.h[i]
		j = i
	}
}

func (s *Scheduler[T]) down(i int) {
	n := len(s.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && s.less(r, l) {
			j = r
		}
		if !s.less(j, i) {
			return
		}
		s.h[i], s.h[j] = s.h[j], s.h[i]
		i = j
	}
}
