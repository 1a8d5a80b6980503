package linkem

import (
	"container/heap"
	"sync"
)

// item is one frame copy waiting for its delivery time.
type item struct {
	at       int64 // ns since the switch's epoch
	seq      uint64
	src, dst *port
	data     []byte
}

// scheduler is a min-heap of delayed frames ordered by delivery time (FIFO
// among equal times), serviced by one goroutine: O(log n) per frame and no
// timer per packet.
type scheduler struct {
	mu   sync.Mutex
	h    itemHeap
	seq  uint64
	wake func() // wakes the delivery goroutine
}

func (s *scheduler) push(it item) {
	s.mu.Lock()
	s.seq++
	it.seq = s.seq
	heap.Push(&s.h, it)
	first := s.h[0].seq == it.seq
	s.mu.Unlock()
	if first { // the delivery goroutine may be sleeping until a later time
		s.wake()
	}
}

// popDue appends every item due at now to out and returns the time of the
// next one (ok false when none is left).
func (s *scheduler) popDue(now int64, out []item) (due []item, next int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.h) > 0 && s.h[0].at <= now {
		out = append(out, heap.Pop(&s.h).(item))
	}
	if len(s.h) > 0 {
		return out, s.h[0].at, true
	}
	return out, 0, false
}

type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = item{}
	*h = old[:len(old)-1]
	return it
}
