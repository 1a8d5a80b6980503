package gossipsub

import (
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/benchnet/benchnet/internal/rundir"
)

// tracer is the host's RawTracer. The router calls it inline, on its event
// loop: it only stamps the event and offers it to a buffered channel; a
// writer goroutine appends to the trace file. A full buffer drops the event
// and counts it (Dropped), so tracing can slow nothing down and a lossy
// trace says so.
type tracer struct {
	node  string
	self  peer.ID
	names map[peer.ID]string
	ch    chan rundir.GossipEvent
	// Dropped counts events lost to a full buffer; Written the ones in the file.
	dropped, written atomic.Int64
	w                *rundir.Writer[rundir.GossipEvent]
	done             chan struct{}
	closeOnce        sync.Once
	// mu guards closed: a send after close would panic.
	mu     sync.RWMutex
	closed bool
}

func newTracer(node string, self peer.ID, names map[peer.ID]string, w *rundir.Writer[rundir.GossipEvent], buffer int) *tracer {
	if buffer <= 0 {
		buffer = 1 << 16
	}
	t := &tracer{node: node, self: self, names: names, ch: make(chan rundir.GossipEvent, buffer), w: w, done: make(chan struct{})}
	go t.run()
	return t
}

func (t *tracer) run() {
	defer close(t.done)
	for e := range t.ch {
		if t.w.Write(&e) == nil {
			t.written.Add(1)
		}
	}
}

// record offers one event; never blocks.
func (t *tracer) record(kind, msgID string, from peer.ID, reason string, size int) {
	e := rundir.GossipEvent{TimeNs: time.Now().UnixNano(), Node: t.node, Kind: kind, MsgID: msgID, Peer: t.names[from], Reason: reason, Size: size}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		t.dropped.Add(1)
		return
	}
	select {
	case t.ch <- e:
	default:
		t.dropped.Add(1)
	}
}

// Close drains the buffer into the file and closes it.
func (t *tracer) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		close(t.ch)
		t.mu.Unlock()
	})
	<-t.done
	return t.w.Close()
}

func msgID(m *pubsub.Message) string {
	if m.ID != "" {
		return m.ID
	}
	return messageID(m.Message)
}

func (t *tracer) DeliverMessage(m *pubsub.Message) {
	// The router also "delivers" the host's own publish (ReceivedFrom is
	// itself): the host records that as publish, at the publish call.
	if m.ReceivedFrom == t.self {
		return
	}
	t.record(rundir.GossipDeliver, msgID(m), m.ReceivedFrom, "", len(m.Data))
}

func (t *tracer) DuplicateMessage(m *pubsub.Message) {
	t.record(rundir.GossipDuplicate, msgID(m), m.ReceivedFrom, "", len(m.Data))
}

func (t *tracer) RejectMessage(m *pubsub.Message, reason string) {
	t.record(rundir.GossipReject, msgID(m), m.ReceivedFrom, reason, len(m.Data))
}

func (t *tracer) UndeliverableMessage(m *pubsub.Message) {
	t.record(rundir.GossipUndeliverable, msgID(m), m.ReceivedFrom, "subscriber_queue_full", len(m.Data))
}

// DropRPC: an outbound RPC to p did not fit its queue. One event per
// message it carried (the analysis attributes missing deliveries to them),
// one without a message for a control-only RPC.
func (t *tracer) DropRPC(rpc *pubsub.RPC, p peer.ID) {
	if len(rpc.Publish) == 0 {
		t.record(rundir.GossipDropRPC, "", p, "queue_full_control", 0)
		return
	}
	for _, m := range rpc.Publish {
		t.record(rundir.GossipDropRPC, messageID(m), p, "queue_full", len(m.Data))
	}
}

// The rest is not recorded: mesh changes and RPC traffic show in the
// go-libp2p metrics; recording every RPC would dwarf the events above.
func (t *tracer) AddPeer(peer.ID, protocol.ID)    {}
func (t *tracer) RemovePeer(peer.ID)              {}
func (t *tracer) Join(string)                     {}
func (t *tracer) Leave(string)                    {}
func (t *tracer) Graft(peer.ID, string)           {}
func (t *tracer) Prune(peer.ID, string)           {}
func (t *tracer) ValidateMessage(*pubsub.Message) {}
func (t *tracer) ThrottlePeer(peer.ID)            {}
func (t *tracer) RecvRPC(*pubsub.RPC)             {}
func (t *tracer) SendRPC(*pubsub.RPC, peer.ID)    {}

var _ pubsub.RawTracer = (*tracer)(nil)
