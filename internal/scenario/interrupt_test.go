package scenario

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// subnetInterrupt is TestInterruptedRunDrains' own subnet.
const subnetInterrupt = "10.213.224.0/24"

// cancelAfterLoad is a log writer that cancels the run a fixed time after
// the load starts (the "load: N txs …" line), like a Ctrl-C.
type cancelAfterLoad struct {
	testenv.Writer
	after  time.Duration
	cancel context.CancelFunc
	once   sync.Once
	at     time.Time
}

func (w *cancelAfterLoad) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "load: ") {
		w.once.Do(func() {
			w.at = time.Now().Add(w.after)
			time.AfterFunc(w.after, w.cancel)
		})
	}
	return w.Writer.Write(p)
}

// TestInterruptedRunDrains is the case: Ctrl-C 20 s into a
// quickstart load at 300 tx/s. The run drains the mempools (at most
// interruptDrain) before it harvests, so the txs the nodes held are
// committed, not counted lost; whatever is still in no block when the drain
// gives up is pending; harvest.json and results.json say how the drain
// ended.
func TestInterruptedRunDrains(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	m := example(t, "quickstart.toml", subnetInterrupt, map[string]map[string]string{
		"load": {"rate": "300", "duration": `"60s"`, "warmup": `"20s"`, "grace": `"30s"`},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &cancelAfterLoad{Writer: testenv.LogWriter(t), after: 20 * time.Second, cancel: cancel}
	out, err := Steady(ctx, m, Options{Up: testnetOptions(t), Log: log})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	res := out.Results
	if res == nil {
		t.Fatalf("no results after the interrupt (run dir %s)", out.RunDir)
	}
	a := res.Accounting
	d := res.Drain
	if d == nil {
		t.Fatal("results.json has no drain")
	}
	t.Logf("interrupted after %s of load: sent %d, committed %d, rejected %d, lost %d, pending %d, send errors %d; drain %+v",
		log.after, a.Sent, a.Committed, a.Rejected, a.Lost, a.Pending, a.SendErrors, *d)
	if !a.Holds() {
		t.Errorf("identity broken: %+v", a)
	}
	// 20 s at 300 tx/s: about 6000 attempted, far from the 18000 planned.
	if a.Sent+a.SendErrors < 5000 || a.Sent+a.SendErrors > 7000 {
		t.Errorf("attempted %d txs in 20 s at 300 tx/s", a.Sent+a.SendErrors)
	}
	if !d.Interrupted || d.BoundSec != interruptDrain.Seconds() || d.WaitedSec > d.BoundSec+1 {
		t.Errorf("drain %+v: want interrupted, bounded by %s", *d, interruptDrain)
	}
	// An interrupted drain never calls a tx lost: the grace period did not pass.
	if a.Lost != 0 {
		t.Errorf("%d txs lost after an interrupted drain (want pending or committed)", a.Lost)
	}
	if d.Complete && a.Pending != 0 {
		t.Errorf("drain complete %v with %d pending", d.Complete, a.Pending)
	}
	// A healthy quickstart takes what its mempools hold within seconds.
	if !d.Empty || a.Committed != a.Sent {
		t.Errorf("mempools not drained within %s: committed %d of %d, pending %d", interruptDrain, a.Committed, a.Sent, a.Pending)
	}
	h, err := (&rundir.Dir{Path: out.RunDir}).ReadHarvest()
	if err != nil || h.Drain == nil || h.Drain.WaitedSec != d.WaitedSec || h.Drain.Complete != d.Complete {
		t.Errorf("harvest.json drain = %+v, %v; results.json has %+v", h, err, *d)
	}
	ls, err := (&rundir.Dir{Path: out.RunDir}).ReadLoad()
	if err != nil || ls.Attempted >= ls.Expected {
		t.Errorf("load.json = %+v, %v: want fewer attempted than expected", ls, err)
	}
	runID, pids := runIdentity(t, out.RunDir)
	checkNothingLeft(t, runID, pids)
}
