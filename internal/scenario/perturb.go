package scenario

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

// ErrHalted is the cause of a run the chain's halt ended.
var ErrHalted = errors.New("chain halted")

// heightInterval is how often the height poller asks every node.
const heightInterval = 500 * time.Millisecond

// Faults runs a manifest's perturbations and rotating nodes during the load
// (a gossip run's publish window), off the load's clock, through the
// testnet's runner and link model. For a kind that keeps a chain (its
// driver is a node.Chain) a height poller (heights.csv) also watches for a
// halt and feeds [rotate]; a kind without one runs the steps alone. The
// zero of its clock is the load's start.
type Faults struct {
	tn     *testnet.Testnet
	chain  node.Chain // nil: no height poller (gossipsub)
	steps  []manifest.Step
	rotate *manifest.Rotate
	halt   time.Duration
	log    io.Writer

	mu      sync.Mutex
	latest  map[string]rundir.HeightSample // by node, last answer
	tip     int64                          // highest height any node reported
	cycles  int                            // rotate cycles started
	stopped bool
}

// NewFaults prepares the faults of m on tn; nil when m has none.
func NewFaults(m *manifest.Manifest, tn *testnet.Testnet, log io.Writer) (*Faults, error) {
	if !m.Faulty() {
		return nil, nil
	}
	steps, err := m.PerturbSteps()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	chain, _ := tn.Driver.(node.Chain)
	if chain == nil && (m.Rotate != nil || m.HaltLimit.Duration > 0) {
		// Validation refuses both for such a kind; a caller that skipped it
		// must not get a run that silently ignores them.
		return nil, fmt.Errorf("faults: [rotate] and halt_limit need a chain's heights, which %s nodes do not have", m.Kind())
	}
	return &Faults{tn: tn, chain: chain, steps: steps, rotate: m.Rotate, halt: m.HaltLimit.Duration, log: log, latest: map[string]rundir.HeightSample{}}, nil
}

// Start runs the poller, the perturbation steps and the rotation from t0
// (the load's start). fail ends the load with a cause (the halt). The
// returned stop ends everything and waits for it; steps not yet due are
// not run.
func (f *Faults) Start(ctx context.Context, t0 time.Time, fail context.CancelCauseFunc) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if f.chain != nil {
		wg.Add(1)
		go func() { defer wg.Done(); f.pollHeights(ctx, fail) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); f.runSteps(ctx, t0) }()
	if f.rotate != nil {
		wg.Add(1)
		go func() { defer wg.Done(); f.runRotate(ctx, t0) }()
	}
	return func() {
		f.mu.Lock()
		f.stopped = true
		f.mu.Unlock()
		cancel()
		wg.Wait()
	}
}

// pollHeights writes every node's height to heights.csv every
// heightInterval, keeps the latest answers, and calls fail once the highest
// height has not moved for the halt limit.
func (f *Faults) pollHeights(ctx context.Context, fail context.CancelCauseFunc) {
	w, err := rundir.HeightsCSV.Append(rundir.HeightsCSV.Path(f.tn.Dir))
	if err != nil {
		fmt.Fprintf(f.log, "warning: height poller: %v\n", err)
		return
	}
	defer w.Close()
	tick := time.NewTicker(heightInterval)
	defer tick.Stop()
	lastMove := time.Now()
	halted := false
	for {
		now := time.Now()
		samples := make([]*rundir.HeightSample, len(f.tn.Plan.Nodes))
		var wg sync.WaitGroup
		for i, n := range f.tn.Plan.Nodes {
			if f.tn.NotStarted(n.Name) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A paused node never answers: bound each ask.
				pctx, cancel := context.WithTimeout(ctx, heightInterval)
				defer cancel()
				if h, catchingUp, err := f.chain.Height(pctx, n); err == nil {
					samples[i] = &rundir.HeightSample{TimeNs: now.UnixNano(), Node: n.Name, Height: h, CatchingUp: catchingUp}
				}
			}()
		}
		wg.Wait()
		f.mu.Lock()
		for _, s := range samples {
			if s == nil {
				continue
			}
			_ = w.Write(s)
			f.latest[s.Node] = *s
			if s.Height > f.tip {
				f.tip, lastMove = s.Height, now
			}
		}
		tip := f.tip
		f.mu.Unlock()
		_ = w.Flush()
		if !halted && f.halt > 0 && now.Sub(lastMove) > f.halt {
			halted = true
			reason := fmt.Sprintf("no node committed a block for %s (halt_limit %s); last height %d at %s",
				now.Sub(lastMove).Round(time.Second), f.halt, tip, lastMove.UTC().Format("15:04:05"))
			fmt.Fprintf(f.log, "\n%s: %s\n", ErrHalted, reason)
			_ = f.tn.Dir.Event(rundir.EventChainHalted, "", reason)
			fail(fmt.Errorf("%w: %s", ErrHalted, reason))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Tip returns the highest height seen and a node's last answer.
func (f *Faults) Tip(node string) (tip int64, last rundir.HeightSample, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	last, ok = f.latest[node]
	return f.tip, last, ok
}

// action is one thing the scheduler does at a time into the load.
type action struct {
	at   time.Duration
	step manifest.Step
	do   string // the testnet call: kill, stop, start, pause, resume, disconnect, partition, heal, wipe
}

// actions expands steps into testnet calls: a restart is a stop and a start
// For later; a wipe-restart a stop, a wipe and a start.
func actions(steps []manifest.Step) []action {
	var out []action
	for _, s := range steps {
		switch s.Action {
		case manifest.ActRestart:
			if s.Undo { // the end of a kill's For
				out = append(out, action{s.At, s, "start"})
				continue
			}
			out = append(out, action{s.At, s, "stop"}, action{s.At + s.For, s, "start"})
		case manifest.ActWipeRestart:
			out = append(out, action{s.At, s, "stop"}, action{s.At, s, "wipe"}, action{s.At + s.For, s, "start"})
		default:
			out = append(out, action{s.At, s, s.Action})
		}
	}
	slices.SortStableFunc(out, func(a, b action) int { return cmp.Compare(a.at, b.at) })
	return out
}

func (f *Faults) runSteps(ctx context.Context, t0 time.Time) {
	for _, a := range actions(f.steps) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(t0.Add(a.at))):
		}
		detail, _ := json.Marshal(analyze.StepEvent{Step: a.step, Do: a.do})
		_ = f.tn.Dir.Event(rundir.EventPerturbStep, strings.Join(a.step.Nodes, ","), string(detail))
		if err := f.do(ctx, a); err != nil {
			fmt.Fprintf(f.log, "\nperturb[%d] %s: %v\n", a.step.Entry, a.do, err)
			_ = f.tn.Dir.Event(rundir.EventPerturbError, strings.Join(a.step.Nodes, ","), fmt.Sprintf("perturb[%d] %s: %v", a.step.Entry, a.do, err))
		} else {
			fmt.Fprintf(f.log, "\nperturb[%d] at %s: %s %s\n", a.step.Entry, a.at, a.do, strings.Join(a.step.Nodes, ","))
		}
	}
}

func (f *Faults) do(ctx context.Context, a action) error {
	tn := f.tn
	each := func(fn func(context.Context, string) error) error {
		var errs []error
		for _, n := range a.step.Nodes {
			errs = append(errs, fn(ctx, n))
		}
		return errors.Join(errs...)
	}
	switch a.do {
	case "kill":
		return each(tn.Kill)
	case "stop":
		return each(tn.StopNode)
	case "start":
		return each(tn.Restart)
	case "wipe":
		return each(tn.Wipe)
	case "pause":
		return each(tn.Pause)
	case "resume":
		return each(tn.Resume)
	case "disconnect":
		return tn.Disconnect(ctx, a.step.Nodes)
	case "partition":
		return tn.Partition(ctx, a.step.Nodes)
	case "heal":
		return tn.Heal(ctx)
	}
	return fmt.Errorf("unknown action %q", a.do)
}

// answering drops nodes the height poller last found down (killed, paused,
// stopped) from the drain: waiting for their mempools would only use up
// the grace. Without faults every node stays.
func (f *Faults) answering(nodes []string) []string {
	if f == nil || f.chain == nil {
		return nodes
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	recent := time.Now().Add(-4 * heightInterval).UnixNano()
	return slices.DeleteFunc(slices.Clone(nodes), func(n string) bool {
		s, ok := f.latest[n]
		return !ok || s.TimeNs < recent
	})
}

// reportFaults writes faults.json and prints one line per perturbation and
// rotate cycle.
func reportFaults(dir string, log io.Writer) error {
	fr, err := analyze.FaultEffects(dir)
	if err != nil || fr == nil {
		return err
	}
	fmt.Fprint(log, analyze.FaultSummary(fr))
	return nil
}
