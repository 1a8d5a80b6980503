package scenario

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testnet"
)

// TestNodeDiesMidLoad kills one of four validators with SIGKILL a few
// seconds into a load that targets every validator: the run still finishes,
// the death is recorded and reported, every tx is accounted for (those sent
// to the dead node after its death are send errors or lost, never
// committed), and the teardown leaves nothing.
func TestNodeDiesMidLoad(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	const rate, seconds, victim = 50, 10, "validator2"
	m := example(t, "quickstart.toml", subnetNodeDies, map[string]map[string]string{
		"load": {"rate": strconv.Itoa(rate), "duration": fmt.Sprintf(`"%ds"`, seconds), "target": `"all"`,
			"warmup": `"20s"`, "grace": `"8s"`},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tn, err := testnet.Up(ctx, m, testnetOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Down(context.Background()) })
	pids := tn.PIDs()
	stopWatch := watchExits(tn, testenv.LogWriter(t))

	// Kill the victim 3 s after the load starts (Measure writes load_start).
	killed := make(chan time.Time, 1)
	go func() {
		defer close(killed)
		for !hasEvent(tn.Dir, "load_start") {
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		time.Sleep(3 * time.Second)
		at := time.Now()
		if err := syscall.Kill(pids[victim], syscall.SIGKILL); err != nil {
			t.Errorf("kill %s (pid %d): %v", victim, pids[victim], err)
			return
		}
		killed <- at
	}()
	res, err := Measure(ctx, tn.Dir, tn.Plan, tn.RunID, testenv.LogWriter(t), nil)
	killAt, ok := <-killed
	stopWatch()
	if err != nil {
		t.Fatalf("measure with a dead node: %v", err)
	}
	if !ok {
		t.Fatal("the victim was never killed")
	}
	summary := analysis.Summary(res)
	t.Logf("summary:\n%s", summary)

	a := res.Accounting
	want := len(tn.Plan.Validators()) * rate * seconds
	if a.Sent+a.SendErrors != want {
		t.Errorf("attempted %d (sent %d + send errors %d), want %d", a.Sent+a.SendErrors, a.Sent, a.SendErrors, want)
	}
	if a.Sent != a.Committed+a.Rejected+a.Lost {
		t.Errorf("identity broken: sent %d != committed %d + rejected %d + lost %d", a.Sent, a.Committed, a.Rejected, a.Lost)
	}
	if a.Committed == 0 {
		t.Errorf("nothing committed: three of four validators should keep the chain going")
	}

	// The death is an event and a node result, with the signal.
	var exited *rundir.NodeResult
	for i, n := range res.Nodes {
		if n.Name == victim {
			exited = &res.Nodes[i]
		} else if n.Exited {
			t.Errorf("%s reported exited: %s", n.Name, n.Detail)
		}
	}
	if exited == nil || !exited.Exited || !strings.Contains(exited.Detail, "killed") {
		t.Errorf("results do not record %s's death by SIGKILL: %+v", victim, exited)
	}
	sawEvent := false
	for _, e := range readEvents(t, tn.Dir.Path) {
		sawEvent = sawEvent || (e.Kind == rundir.EventNodeExited && e.Node == victim)
	}
	if !sawEvent {
		t.Errorf("no node_exited event for %s", victim)
	}
	if !strings.Contains(summary, victim) {
		t.Errorf("the summary does not mention that %s died during the run", victim)
	}

	// Per tx: after the kill (plus a margin for the process to go) nothing
	// sent to the victim commits; the live validators commit all of theirs.
	margin := killAt.Add(200 * time.Millisecond).UnixNano()
	var afterKill int
	states := map[string]map[string]int{}
	for _, r := range readCSV(t, filepath.Join(tn.Dir.Path, rundir.TxsCSV.Name)) {
		if states[r["node"]] == nil {
			states[r["node"]] = map[string]int{}
		}
		states[r["node"]][r["state"]]++
		sent, _ := strconv.ParseInt(r["sent_ns"], 10, 64)
		if r["node"] == victim && sent > margin {
			afterKill++
			if r["state"] != rundir.StateSendError && r["state"] != rundir.StateLost {
				t.Errorf("tx %s sent to dead %s %s after the kill is %s", r["seq"], victim, time.Duration(sent-killAt.UnixNano()), r["state"])
			}
		}
	}
	t.Logf("states by node: %v; %d txs addressed to %s after its death", states, afterKill, victim)
	if afterKill == 0 {
		t.Errorf("no tx went to %s after it was killed: the test did not test anything", victim)
	}
	for n, st := range states {
		if n != victim && st[rundir.StateCommitted] != rate*seconds {
			t.Errorf("live %s: %v, want all %d committed", n, st, rate*seconds)
		}
	}

	if err := tn.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	checkNothingLeft(t, tn.RunID, pids)
}

func hasEvent(d *rundir.Dir, kind string) bool {
	ev, _ := d.ReadEvents()
	for _, e := range ev {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// TestUnreachableNode: load against a plan whose nodes nobody runs fails
// fast with an error naming the node, with and without a warm-up. No root
// needed: the plan sits on loopback, where every connect is refused at once.
func TestUnreachableNode(t *testing.T) {
	for _, tc := range []struct {
		warmup string
		want   []string
	}{
		{`"3s"`, []string{"warm-up", "validator0", "unreachable", "refused"}},
		{`"0s"`, []string{"no validator answers RPC", "validator0", "validator3", "refused"}},
	} {
		t.Run("warmup="+strings.Trim(tc.warmup, `"`), func(t *testing.T) {
			m := example(t, "quickstart.toml", subnetUnreachable, map[string]map[string]string{
				"load": {"warmup": tc.warmup, "duration": `"2s"`},
			})
			p, err := plan.Resolve(m)
			if err != nil {
				t.Fatal(err)
			}
			onLoopback(p)
			dir, err := rundir.Create(t.TempDir(), p.Name, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			defer dir.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			res, err := Measure(ctx, dir, p, "abcdef", io.Discard, nil)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("Measure against nothing succeeded: %+v", res)
			}
			t.Logf("after %s: %v", took.Round(time.Millisecond), err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if took > 2*time.Second {
				t.Errorf("took %s: refused connections should fail at once", took)
			}
		})
	}
}

// TestLoadInputValidated: what the manifest accepts, the load generator must
// accept too, or a run fails only after the testnet is up and warmed; bad
// rates and sizes are rejected up front, naming the field. (Rate 0 and a
// too-small kv size are also covered in internal/manifest and the CLI tests.)
func TestLoadInputValidated(t *testing.T) {
	parse := func(format string, size int, rate string) (*manifest.Manifest, error) {
		doc := fmt.Sprintf("[node.validator]\ncount = 4\n[load]\nformat = %q\nsize = %d\nrate = %s\n", format, size, rate)
		return manifest.Parse("load.toml", []byte(doc))
	}
	for _, rate := range []string{"0", "-5"} {
		if _, err := parse("kv", 1024, rate); err == nil || !strings.Contains(err.Error(), "load.toml:6: load.rate") {
			t.Errorf("rate %s: want a load.rate error with its line, got %v", rate, err)
		}
	}
	for _, format := range []string{"kv", "loadtime"} {
		sizes := []int{0, 1, 1023, 1024, 1025}
		for s := 30; s <= 90; s++ {
			sizes = append(sizes, s)
		}
		var accepted, gaps []string
		for _, size := range sizes {
			m, err := parse(format, size, "200")
			if err != nil {
				if !strings.Contains(err.Error(), "load.size") {
					t.Errorf("%s size %d rejected for another reason: %v", format, size, err)
				}
				continue
			}
			accepted = append(accepted, strconv.Itoa(size))
			if _, err := load.NewCodec(load.FromManifest(m.Load, "abcdef")); err != nil {
				gaps = append(gaps, fmt.Sprintf("%d (%v)", size, err))
			}
		}
		if len(accepted) == 0 {
			t.Errorf("%s: no size accepted", format)
		}
		if len(gaps) > 0 {
			t.Errorf("%s: the manifest accepts sizes the load generator rejects, so the run fails after up and warm-up: %s",
				format, strings.Join(gaps, "; "))
		}
	}
}
