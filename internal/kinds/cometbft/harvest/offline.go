package harvest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// InspectMethod names how Offline reads a store, in harvest.json.
const InspectMethod = "cometbft inspect"

// inspectReady bounds the wait for `cometbft inspect` to open a store and
// answer RPC.
var inspectReady = 30 * time.Second

// Offline harvests the blocks of a run that did not finish from the stores
// its nodes left in homes/, as CometBFT's `loadtime report` reads a
// blockstore: each validator's home is opened with its own release's
// `cometbft inspect` (the block and state stores served read-only over RPC on
// a free loopback port, no node and no app running), the validator with the
// highest block is kept, and the normal harvest runs against it. The nodes
// must be stopped (`benchnet down`): a running node holds its store's lock.
//
// The range starts at the block that was being built when the warm-up ended
// (the event `warmup_done`, else `load_start`): every earlier block was
// proposed before the first run tx existed. It ends at the store's last
// block; there is no block after it for the H+1 latency of its txs.
// harvest.json records the recovery, and analyze copies it into results.json.
func Offline(ctx context.Context, dir string, reason string, log io.Writer) (*Result, error) {
	if log == nil {
		log = io.Discard
	}
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	p, err := plan.Read(d.Path)
	if err != nil {
		return nil, fmt.Errorf("offline harvest: %w", err)
	}
	start, err := loadStartTime(d)
	if err != nil {
		return nil, err
	}

	// Open every validator's store, keep the one with the highest block.
	var (
		best    *inspector
		bestTop int64
		errs    []error
	)
	defer func() {
		if best != nil {
			best.stop()
		}
	}()
	for _, n := range p.Validators() {
		home := d.Join(rundir.Homes, n.Name)
		if _, err := os.Stat(filepath.Join(home, "data")); err != nil {
			errs = append(errs, fmt.Errorf("%s: no store: %w", n.Name, err))
			continue
		}
		if !hasInspect(n.Release) {
			errs = append(errs, fmt.Errorf("%s: %s has no `inspect` command (no v0.34 release has one, Tendermint Core's nor CometBFT's), which the offline harvest reads a store with", n.Name, n.Release))
			continue
		}
		bin, err := binaries.Ensure(ctx, n.Release, "cometbft", log)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		ins, err := startInspect(ctx, bin, home, d.Join(rundir.Logs, "inspect-"+n.Name+".log"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		ins.node, ins.release = n.Name, n.Release.String()
		top, err := ins.top(ctx)
		if err != nil {
			ins.stop()
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		fmt.Fprintf(log, "store of %s (%s): blocks up to %d\n", n.Name, n.Release, top)
		if best == nil || top > bestTop {
			if best != nil {
				best.stop()
			}
			best, bestTop = ins, top
		} else {
			ins.stop()
		}
	}
	if best == nil {
		return nil, fmt.Errorf("offline harvest: no validator store could be read: %w", errors.Join(errs...))
	}
	from, err := firstBlockAfter(ctx, best.client, bestTop, start)
	if err != nil {
		return nil, fmt.Errorf("offline harvest: %s: %w", best.node, err)
	}
	fmt.Fprintf(log, "harvesting blocks %d..%d from the store of %s\n", from, bestTop, best.node)
	rec := &rundir.Recovery{Node: best.node, Release: best.release, Method: InspectMethod, Reason: reason}
	// The run died before its drain: a tx in no block of the store was still
	// on its way when it died, so it is pending (not known to be lost).
	drain := &rundir.Drain{Complete: false, Interrupted: true, Left: "run did not finish: " + reason}
	// inspect serves no /status, so the harvest's wait for block to+1 ends at
	// once: the store has no block after its last.
	return HarvestWith(ctx, best.client.URL, from, bestTop, dir, Options{NextBlockWait: time.Nanosecond, Recovered: rec, Drain: drain})
}

// loadStartTime is when the run's first tx could exist: the end of the
// warm-up, else the start of the load.
func loadStartTime(d *rundir.Dir) (time.Time, error) {
	evs, err := d.ReadEvents()
	if err != nil && len(evs) == 0 {
		return time.Time{}, fmt.Errorf("offline harvest: %w", err)
	}
	var load time.Time
	for _, e := range evs {
		switch e.Kind {
		case rundir.EventWarmupDone:
			return e.Time, nil
		case rundir.EventLoadStart:
			if load.IsZero() {
				load = e.Time
			}
		}
	}
	if load.IsZero() {
		return time.Time{}, fmt.Errorf("offline harvest: %s has no warmup_done or load_start event: the load never started", rundir.Events)
	}
	return load, nil
}

// firstBlockAfter is the highest height whose time is before t (1 when none
// is): block h's time is about the commit of h−1, so every block below it was
// proposed before t, and it may itself be proposed after t.
func firstBlockAfter(ctx context.Context, c *cometrpc.Client, top int64, t time.Time) (int64, error) {
	for hi := top; hi >= 1; hi -= cometrpc.MaxBlockMetas {
		lo := max(1, hi-cometrpc.MaxBlockMetas+1)
		metas, err := c.BlockMetas(ctx, lo, hi)
		if err != nil {
			return 0, fmt.Errorf("block times %d-%d: %w", lo, hi, err)
		}
		for i := len(metas) - 1; i >= 0; i-- {
			if metas[i].Time.Before(t) {
				return metas[i].Height, nil
			}
		}
	}
	return 1, nil
}

// inspector is one running `cometbft inspect`.
type inspector struct {
	cmd           *exec.Cmd
	client        *cometrpc.Client
	exited        chan struct{}
	waitErr       error
	node, release string
}

// hasInspect: the release has `inspect` (checked in the module zips:
// absent from tendermint v0.34.22 and cometbft v0.34.35 cmd/*/commands).
func hasInspect(rel release.Release) bool { return !strings.HasPrefix(rel.Version, "v0.34.") }

func startInspect(ctx context.Context, bin, home, logPath string) (*inspector, error) {
	port, err := loopbackPort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(context.WithoutCancel(ctx), bin, "inspect", "--home", home, "--rpc.laddr", "tcp://"+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGTERM lets inspect close its stores; a stuck one is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s inspect: %w", bin, err)
	}
	ins := &inspector{cmd: cmd, client: cometrpc.New("http://" + addr), exited: make(chan struct{})}
	go func() {
		ins.waitErr = cmd.Wait()
		logf.Close()
		close(ins.exited)
	}()
	return ins, nil
}

// top waits until inspect answers and returns the store's last height.
func (ins *inspector) top(ctx context.Context) (int64, error) {
	deadline := time.Now().Add(inspectReady)
	for {
		metas, err := ins.client.BlockMetas(ctx, 1, math.MaxInt32)
		if err == nil && len(metas) > 0 {
			return metas[len(metas)-1].Height, nil
		}
		if err == nil {
			return 0, errors.New("the block store is empty")
		}
		select {
		case <-ins.exited:
			return 0, fmt.Errorf("inspect exited (%v) before answering; see %s", ins.waitErr, ins.cmd.Stdout.(*os.File).Name())
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("inspect did not answer within %s: %w", inspectReady, err)
		}
	}
}

func (ins *inspector) stop() {
	select {
	case <-ins.exited:
		return
	default:
	}
	_ = ins.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ins.exited:
	case <-time.After(10 * time.Second):
		_ = ins.cmd.Process.Kill()
		<-ins.exited
	}
}

// loopbackPort asks the kernel for a free loopback port.
func loopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
