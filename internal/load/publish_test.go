package load

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func pub(rate float64, count int, src string) manifest.Publish {
	return manifest.Publish{Rate: rate, Count: count, Size: 1000, Source: src}
}

func TestPublishScheduleIsTheSeeds(t *testing.T) {
	nodes := []string{"g0", "g1", "g2", "g3", "g4"}
	a, err := PublishSchedule(pub(200, 100, "random"), 42, nodes)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PublishSchedule(pub(200, 100, "random"), 42, nodes)
	c, _ := PublishSchedule(pub(200, 100, "random"), 43, nodes)
	if len(a) != 100 || !slices.Equal(a, b) {
		t.Fatalf("same seed: %d messages, equal %v", len(a), slices.Equal(a, b))
	}
	samePub, sameID := 0, 0
	used := map[string]bool{}
	for i := range a {
		if a[i].Offset != time.Duration(i)*5*time.Millisecond {
			t.Fatalf("message %d at %s, want %s", i, a[i].Offset, time.Duration(i)*5*time.Millisecond)
		}
		if len(a[i].ID) != manifest.MinPublishSize {
			t.Fatalf("ID %q: want %d characters", a[i].ID, manifest.MinPublishSize)
		}
		used[a[i].Publisher] = true
		if a[i].Publisher == c[i].Publisher {
			samePub++
		}
		if a[i].ID == c[i].ID {
			sameID++
		}
	}
	if len(used) != len(nodes) {
		t.Errorf("100 random picks used %d of %d nodes", len(used), len(nodes))
	}
	// Chance agreement is 1/5 per message; 60 of 100 would be no seed effect.
	if samePub > 60 || sameID > 0 {
		t.Errorf("seeds 42 and 43: %d same publishers, %d same IDs", samePub, sameID)
	}
	fixed, _ := PublishSchedule(pub(10, 0, "g3"), 1, nodes)
	if len(fixed) != 0 {
		t.Fatal("count 0 and no duration should not schedule")
	}
	p := pub(10, 0, "g3")
	p.Duration.Duration = 3 * time.Second
	fixed, _ = PublishSchedule(p, 1, nodes)
	if len(fixed) != 30 {
		t.Errorf("10 msg/s for 3 s: %d messages, want 30", len(fixed))
	}
	for _, m := range fixed {
		if m.Publisher != "g3" {
			t.Fatalf("source g3: message from %s", m.Publisher)
		}
	}
}

func runPublish(t *testing.T, sched []PublishMsg, f PublishFunc) (*rundir.LoadSummary, []rundir.Published) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "published.csv")
	w, err := rundir.PublishedCSV.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := RunPublish(context.Background(), nil, time.Now().Add(20*time.Millisecond), sched, 1000, f, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, _, err := rundir.PublishedCSV.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum, rows
}

// Every message is asked for exactly once, at its time, and recorded.
func TestRunPublishRecordsEveryMessage(t *testing.T) {
	sched, _ := PublishSchedule(pub(500, 200, "random"), 9, []string{"a", "b", "c"})
	var mu sync.Mutex
	got := map[string]string{}
	sum, rows := runPublish(t, sched, func(ctx context.Context, node, id string, size int) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[id]; dup {
			t.Errorf("%s published twice", id)
		}
		got[id] = node
		if id == sched[7].ID {
			return errors.New("host refused")
		}
		return nil
	})
	if len(got) != 200 || len(rows) != 200 || sum.Attempted != 200 || sum.OK != 199 || sum.SendErrors != 1 {
		t.Fatalf("published %d, rows %d, summary %+v", len(got), len(rows), sum)
	}
	for _, r := range rows {
		m := sched[r.Seq]
		if r.MsgID != m.ID || r.Publisher != m.Publisher || got[m.ID] != m.Publisher {
			t.Errorf("row %+v does not match schedule %+v", r, m)
		}
		if r.SentAt < r.Intended || (r.Result == rundir.ResultOK) != (r.Ack >= r.SentAt) {
			t.Errorf("row %d times: intended %d sent %d ack %d", r.Seq, r.Intended, r.SentAt, r.Ack)
		}
	}
	// Validity depends on this machine's load (the lag limit); the target
	// rate is the schedule's alone.
	if c := sum.Conns[0]; c.TargetRate < 499 || c.TargetRate > 501 || c.Attempted != 200 {
		t.Errorf("summary %+v: want target 500 msg/s over 200 messages", c)
	}
}

// Hosts that answer slower than in-flight requests allow make the pacer
// fall behind: the run says it is invalid instead of reporting it.
func TestRunPublishCertifiesLag(t *testing.T) {
	sched, _ := PublishSchedule(pub(2000, MaxPublishInFlight+200, "random"), 1, []string{"a"})
	sum, _ := runPublish(t, sched, func(ctx context.Context, node, id string, size int) error {
		time.Sleep(400 * time.Millisecond)
		return nil
	})
	if sum.Valid || len(sum.Invalid) == 0 || !strings.Contains(sum.Invalid[0], "lag") {
		t.Fatalf("a generator 300 ms behind is valid: %+v", sum)
	}
}
