package linkem

import (
	"bytes"
	"os"
	"testing"

	"github.com/prometheus/common/expfmt"
)

func TestSchedulerOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   []int64 // push order
		now  int64
		want []int64 // due, in pop order (ties: push order, by seq)
		next int64
	}{
		{"earliest first", []int64{30, 10, 20}, 25, []int64{10, 20}, 30},
		{"ties keep FIFO", []int64{10, 10, 5, 10}, 10, []int64{5, 10, 10, 10}, 0},
		{"nothing due", []int64{50}, 10, nil, 50},
	} {
		var s Scheduler[frameCopy]
		wakes := 0
		s.Wake = func() { wakes++ }
		for i, at := range tc.at {
			s.Push(at, frameCopy{data: []byte{byte(i)}})
		}
		due, next, ok := s.PopDue(tc.now, nil)
		var got []int64
		for _, it := range due {
			got = append(got, it.At)
		}
		if !equalInts(got, tc.want) {
			t.Errorf("%s: due %v, want %v", tc.name, got, tc.want)
		}
		if ok != (tc.next != 0) || next != tc.next {
			t.Errorf("%s: next %d %v, want %d", tc.name, next, ok, tc.next)
		}
		if tc.name == "ties keep FIFO" {
			if order := []byte{due[1].V.data[0], due[2].V.data[0], due[3].V.data[0]}; !bytes.Equal(order, []byte{0, 1, 3}) {
				t.Errorf("equal times popped in push order %v, want [0 1 3]", order)
			}
		}
		if wakes == 0 || wakes > len(tc.at) {
			t.Errorf("%s: %d wake-ups for %d pushes", tc.name, wakes, len(tc.at))
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteMetricsGolden(t *testing.T) {
	var b bytes.Buffer
	err := WriteMetrics(&b, []PortStats{
		{Port: "validator0", Tap: "bl00-0", SentPackets: 10, SentBytes: 1000, ForwardedPackets: 8, ForwardedBytes: 800,
			DroppedLoss: 1, DroppedQueue: 1, ReceivedPackets: 9, ReceivedBytes: 900},
		{Port: "harness", Tap: "bl00-1", WriteErrors: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "metrics.golden", b.String())
}

// TestMetricsParse reads the golden output back with Prometheus's own
// text-format parser.
func TestMetricsParse(t *testing.T) {
	data, err := os.ReadFile("testdata/metrics.golden")
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not valid Prometheus text: %v", err)
	}
	f := fams["benchnet_linkem_dropped_loss_packets_total"]
	if f == nil || len(f.Metric) != 2 || f.Metric[0].GetCounter().GetValue() != 1 {
		t.Errorf("dropped_loss family: %v", f)
	}
	if len(fams) != 10 {
		t.Errorf("%d families, want 10", len(fams))
	}
}
