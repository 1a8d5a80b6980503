package rundir

import "strconv"

// The gossip lab's records (issue 12): the harness's publish schedule, each
// host's own trace, and the analysis's per-delivery rows. Node names are the
// plan's (hosts map peer IDs to names from the plan), so every file reads
// without the identities.

// Gossip event kinds of a host's trace.
const (
	GossipPublish       = "publish"       // this host published the message
	GossipDeliver       = "deliver"       // first delivery to this host (Peer forwarded it)
	GossipDuplicate     = "duplicate"     // a later copy (Peer sent it)
	GossipReject        = "reject"        // validation rejected it (Reason)
	GossipDropRPC       = "drop_rpc"      // an RPC to Peer was dropped (queue full: Reason)
	GossipUndeliverable = "undeliverable" // the local subscriber queue was full
)

// Published is one row of published.csv: one message the harness asked a
// host to publish, with its scheduled and actual times (as sent.csv is for
// txs, so the publish generator certifies itself).
type Published struct {
	Seq       uint64
	MsgID     string
	Publisher string // node name
	Intended  int64  // scheduled publish time
	SentAt    int64  // when the harness sent the publish request
	Ack       int64  // when the host answered (0: no answer)
	Result    string // ResultOK or ResultSendError
	Log       string
}

// PublishedCSV is published.csv (written by the gossip load, read by analysis).
var PublishedCSV = &CSV[Published]{
	Name:   "published.csv",
	Header: []string{"seq", "msg_id", "publisher", "intended_ns", "sent_ns", "ack_ns", "result", "log"},
	encode: func(p *Published, f []string) {
		f[0], f[1], f[2] = strconv.FormatUint(p.Seq, 10), p.MsgID, p.Publisher
		f[3], f[4], f[5], f[6], f[7] = i64(p.Intended), i64(p.SentAt), i64(p.Ack), p.Result, p.Log
	},
	decode: func(p *Published, f *fields) {
		p.Seq, p.MsgID, p.Publisher = f.Uint64(0), f.Str(1), f.Sym(2)
		p.Intended, p.SentAt, p.Ack, p.Result, p.Log = f.Int64(3), f.Int64(4), f.Int64(5), f.Sym(6), f.Str(7)
		switch p.Result {
		case ResultOK, ResultSendError:
		default:
			f.Fail(6, "%q: want ok or send_error", p.Result)
		}
	},
}

// GossipEvent is one row of a host's trace, traces/<node>.csv, appended by
// the host as events happen (a tracer that never blocks the router).
type GossipEvent struct {
	TimeNs int64
	Node   string // the host that recorded it
	Kind   string // Gossip* above
	MsgID  string // empty for events without a message
	Peer   string // forwarding / target peer's node name (empty: none or unknown)
	Reason string // reject/drop reason
	Size   int    // message bytes
}

// GossipTraceDir holds one trace file per host.
const GossipTraceDir = "traces"

// GossipTraceCSV is the codec of every traces/<node>.csv; use TraceFile for a
// host's path.
var GossipTraceCSV = &CSV[GossipEvent]{
	Name:   GossipTraceDir + "/node.csv",
	Header: []string{"t_ns", "node", "kind", "msg_id", "peer", "reason", "size"},
	encode: func(e *GossipEvent, f []string) {
		f[0], f[1], f[2], f[3] = i64(e.TimeNs), e.Node, e.Kind, e.MsgID
		f[4], f[5], f[6] = e.Peer, e.Reason, strconv.Itoa(e.Size)
	},
	decode: func(e *GossipEvent, f *fields) {
		e.TimeNs, e.Node, e.Kind, e.MsgID = f.Int64(0), f.Sym(1), f.Sym(2), f.Str(3)
		e.Peer, e.Reason, e.Size = f.Sym(4), f.Sym(5), f.Int(6)
	},
}

// TraceFile is the trace path of node inside run directory d.
func TraceFile(d *Dir, node string) string { return d.Join(GossipTraceDir, node+".csv") }

// Delivery states of deliveries.csv.
const (
	DeliveryDelivered = "delivered"
	DeliveryMissing   = "missing" // never delivered; Reason attributes it where the traces allow
)

// Delivery is one row of deliveries.csv: one (message, receiving node) pair
// of the run, the gossip counterpart of txs.csv.
type Delivery struct {
	MsgID      string
	Publisher  string
	Node       string
	State      string // DeliveryDelivered or DeliveryMissing
	From       string // the peer that delivered it first
	Hop        int    // depth in the first-delivery tree (publisher's neighbours: 1)
	PublishNs  int64
	DeliverNs  int64 // 0 when missing
	Duplicates int
	Reason     string // for missing: dropped_rpc, queue_full, never_reached, host_exited …
}

// DeliveriesCSV is deliveries.csv (written by the gossip analysis, read by report).
var DeliveriesCSV = &CSV[Delivery]{
	Name:   "deliveries.csv",
	Header: []string{"msg_id", "publisher", "node", "state", "from", "hop", "publish_ns", "deliver_ns", "duplicates", "reason"},
	encode: func(d *Delivery, f []string) {
		f[0], f[1], f[2], f[3], f[4] = d.MsgID, d.Publisher, d.Node, d.State, d.From
		f[5], f[6], f[7], f[8], f[9] = strconv.Itoa(d.Hop), i64(d.PublishNs), i64(d.DeliverNs), strconv.Itoa(d.Duplicates), d.Reason
	},
	decode: func(d *Delivery, f *fields) {
		d.MsgID, d.Publisher, d.Node, d.State, d.From = f.Str(0), f.Sym(1), f.Sym(2), f.Sym(3), f.Sym(4)
		d.Hop, d.PublishNs, d.DeliverNs, d.Duplicates, d.Reason = f.Int(5), f.Int64(6), f.Int64(7), f.Int(8), f.Sym(9)
		switch d.State {
		case DeliveryDelivered, DeliveryMissing:
		default:
			f.Fail(3, "%q: want delivered or missing", d.State)
		}
	},
}
