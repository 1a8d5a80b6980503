package analysis

import (
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

func TestTimeline(t *testing.T) {
	const ms = int64(1e6)
	// 5 messages every 10 ms; the harness sends the third 30 ms late, the
	// host publishes each 1 ms after the send; message 4 was never sent,
	// message 3 left no trace (its ack stands in).
	pub := []rundir.Published{
		{Seq: 0, MsgID: "a", Intended: 0, SentAt: 1 * ms, Ack: 3 * ms},
		{Seq: 1, MsgID: "b", Intended: 10 * ms, SentAt: 10 * ms, Ack: 12 * ms},
		{Seq: 2, MsgID: "c", Intended: 20 * ms, SentAt: 50 * ms, Ack: 52 * ms},
		{Seq: 3, MsgID: "d", Intended: 30 * ms, SentAt: 51 * ms, Ack: 55 * ms},
		{Seq: 4, MsgID: "e", Intended: 40 * ms},
	}
	host := map[string]int64{"a": 2 * ms, "b": 11 * ms, "c": 51 * ms}
	ts := Transmissions(pub, host)
	if len(ts) != 4 {
		t.Fatalf("%d transmissions, want 4 (the unsent one left out)", len(ts))
	}
	if ts[3].Host != 55*ms || ts[3].HostTraced {
		t.Errorf("untraced message: host %d traced %v, want the ack 55 ms, false", ts[3].Host, ts[3].HostTraced)
	}
	s := Timeline(ts)
	if s.Messages != 4 || s.Traced != 3 {
		t.Errorf("messages %d traced %d, want 4, 3", s.Messages, s.Traced)
	}
	if s.IntendedGap != 10 {
		t.Errorf("intended gap %v, want 10 ms", s.IntendedGap)
	}
	// Sends at 1, 10, 50, 51: gaps 9, 40, 1.
	if s.SentGap.N != 3 || s.SentGap.Max != 40 || s.SentGap.Min != 1 || s.SentGap.Avg != 16.667 {
		t.Errorf("sent gaps %+v, want 9, 40, 1", s.SentGap)
	}
	// Lateness of the sends: 1, 0, 30, 21.
	if s.SentLate.Max != 30 || s.SentLate.Min != 0 || s.SentLate.P50 != 1 {
		t.Errorf("sent lateness %+v, want 1, 0, 30, 21", s.SentLate)
	}
	// Host times 2, 11, 51, 55: lateness 2, 1, 31, 25; gaps 9, 40, 4.
	if s.HostLate.Max != 31 || s.HostGap.Min != 4 {
		t.Errorf("host lateness %+v gaps %+v", s.HostLate, s.HostGap)
	}
}

func TestGapsSortsTheStream(t *testing.T) {
	// A message overtaking another: two short gaps, none negative.
	g := Gaps([]int64{0, 30e6, 20e6, 40e6})
	want := []float64{20, 10, 10}
	for i := range want {
		if g[i] != want[i] {
			t.Fatalf("gaps %v, want %v", g, want)
		}
	}
	if Gaps([]int64{5}) != nil {
		t.Error("one time has no gap")
	}
	if z := Timeline(nil); z.Messages != 0 || z.SentGap.N != 0 {
		t.Errorf("no messages: %+v", z)
	}
}
