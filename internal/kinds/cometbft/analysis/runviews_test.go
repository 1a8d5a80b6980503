package analysis

import (
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestPerSecondStats(t *testing.T) {
	s := int64(1e9)
	blocks := []rundir.Block{
		{Height: 1, TimeNs: 0, NumTxs: 9},                 // before the run's txs: outside
		{Height: 2, TimeNs: 10 * s, NumTxs: 4, RunTxs: 4}, // second 0
		{Height: 3, TimeNs: 10*s + s/2, NumTxs: 2, RunTxs: 2},
		{Height: 4, TimeNs: 12 * s, NumTxs: 6, RunTxs: 6}, // second 2 (second 1 empty)
		{Height: 5, TimeNs: 13 * s, NumTxs: 3, RunTxs: 3}, // second 3: a 3 s span fills 4 seconds
	}
	ps := PerSecondStats(blocks, 75)
	if ps == nil || ps.Seconds != 4 {
		t.Fatalf("got %+v, want 4 seconds", ps)
	}
	// txs per second: 6, 0, 6, 3 → avg 3.75, stddev sqrt(24.75/4) = 2.487
	if ps.Txs.Avg != 3.75 || ps.Txs.Std != 2.487 || ps.Txs.Max != 6 {
		t.Errorf("txs/s = %+v, want avg 3.75 stddev 2.487 max 6", ps.Txs)
	}
	// blocks: 2, 0, 1, 1 → avg 1, stddev 0.707
	if ps.Blocks.Avg != 1 || ps.Blocks.Std != 0.707 || ps.Blocks.Max != 2 || ps.BlocksPerMin != 75 {
		t.Errorf("blocks/s = %+v (per min %v)", ps.Blocks, ps.BlocksPerMin)
	}
	if PerSecondStats(blocks[:2], 0) != nil {
		t.Error("one block of run txs gave statistics")
	}
}

func TestP2PTraffic(t *testing.T) {
	s := int64(1e9)
	ns := func(n string) string {
		if n == "b" {
			return "tendermint"
		}
		return "cometbft"
	}
	smp := func(ts int64, node, metric, labels string, v float64) rundir.Sample {
		return rundir.Sample{TimeNs: ts * s, Node: node, Metric: metric, Labels: labels, Value: v}
	}
	samples := []rundir.Sample{
		// a: v1 counters, a message type born at t=2, a restart (reset) at t=3.
		smp(1, "a", "cometbft_p2p_message_send_bytes_total", "x", 100),
		smp(2, "a", "cometbft_p2p_message_send_bytes_total", "x", 300),
		smp(2, "a", "cometbft_p2p_message_send_bytes_total", "y", 50),
		smp(3, "a", "cometbft_p2p_message_send_bytes_total", "x", 40),
		smp(3, "a", "cometbft_p2p_message_send_bytes_total", "y", 60),
		smp(1, "a", "cometbft_p2p_message_receive_bytes_total", "x", 10),
		smp(3, "a", "cometbft_p2p_message_receive_bytes_total", "x", 30),
		// b: v0.34 counters under its own namespace.
		smp(1, "b", "tendermint_p2p_peer_send_bytes_total", "p1", 1000),
		smp(3, "b", "tendermint_p2p_peer_send_bytes_total", "p1", 1600),
		// another namespace's series on b is not b's.
		smp(3, "b", "cometbft_p2p_peer_send_bytes_total", "p1", 1e9),
	}
	tr := P2PTraffic(samples, ns, 1*s, 3*s, 10)
	if tr == nil || tr.Metric != "p2p_message_send_bytes_total" {
		t.Fatalf("got %+v", tr)
	}
	// a: 200 (x) + 50 (y born) + 40 (x reset) + 10 (y) = 300; b: 600.
	if tr.SentBytes != 900 || tr.ReceivedBytes != 20 || tr.BytesPerTx != 90 {
		t.Errorf("sent %v received %v per tx %v, want 900, 20, 90", tr.SentBytes, tr.ReceivedBytes, tr.BytesPerTx)
	}
	// The window cuts: from t=2 on, a sent 40+10 and b 600.
	if tr := P2PTraffic(samples, ns, 2*s, 3*s, 0); tr.SentBytes != 650 || tr.BytesPerTx != 0 {
		t.Errorf("window [2,3]: sent %v per tx %v, want 650, 0", tr.SentBytes, tr.BytesPerTx)
	}
	if P2PTraffic(samples[7:8], ns, 0, 3*s, 1) == nil || P2PTraffic(samples[9:], ns, 0, 3*s, 1) != nil {
		t.Error("a node's counters under another namespace were read")
	}
}

func TestAtCapacity(t *testing.T) {
	p := &plan.Testnet{Nodes: []*plan.Node{
		{Name: "seed0", Role: "seed"},
		{Name: "v0", Role: "validator"},
		{Name: "f0", Role: "full", Config: map[string]any{"mempool.size": int64(100)}},
	}}
	if l, src := MempoolLimit(p); l != 100 || src != "config" {
		t.Fatalf("limit %d %s, want 100 config", l, src)
	}
	if l, src := MempoolLimit(&plan.Testnet{Nodes: p.Nodes[:2]}); l != DefaultMempoolSize || src != "default" {
		t.Fatalf("limit %d %s, want the default", l, src)
	}
	ms := []rundir.MempoolSample{
		{TimeNs: 1e9, Node: "seed0", Size: 500}, // a seed never counts
		{TimeNs: 1e9, Node: "v0", Size: 10},
		{TimeNs: 1e9 + 2e6, Node: "f0", Size: 99},
		{TimeNs: 15e8, Node: "v0", Size: 100}, // at the limit
		{TimeNs: 15e8 + 1e6, Node: "f0", Size: 5},
		{TimeNs: 2e9, Node: "v0", Size: 0},
		{TimeNs: 9e9, Node: "v0", Size: 900}, // outside the window
	}
	c := AtCapacity(p, ms, 0, 3e9)
	if c == nil || c.Rounds != 3 || c.AtCap != 1 || c.Share != 0.333 {
		t.Errorf("got %+v, want 1 of 3 rounds", c)
	}
}
