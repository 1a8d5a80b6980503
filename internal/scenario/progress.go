package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/node"
)

// progress prints one line per second during the load: elapsed, sent/s,
// committed/s, height, mempool. On a terminal the line refreshes in place;
// otherwise (CI logs, pipes) each second is a plain line.
type progress struct {
	out    io.Writer
	tty    bool
	runner *load.Runner
	win    node.TxWindow
	cancel context.CancelFunc
	ctx    context.Context
}

func newProgress(out io.Writer, r *load.Runner, win node.TxWindow) *progress {
	ctx, cancel := context.WithCancel(context.Background())
	return &progress{out: out, tty: isTerminal(out), runner: r, win: win, ctx: ctx, cancel: cancel}
}

func (p *progress) stop() { p.cancel() }

func (p *progress) start() <-chan struct{} {
	done := make(chan struct{})
	if p.out == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastSent int
		// committed/s over a sliding window: blocks come every ~1 s, so a
		// per-second count would jump between 0 and twice the rate.
		const window = 5
		var cum int
		var hist []int
		for {
			select {
			case <-p.ctx.Done():
				if p.tty {
					fmt.Fprintln(p.out)
				}
				return
			case <-tick.C:
			}
			pr := p.runner.Progress()
			committed, status := p.win.Progress(p.ctx)
			cum += committed
			hist = append(hist, cum)
			if len(hist) > window+1 {
				hist = hist[1:]
			}
			rate := 0
			if n := len(hist) - 1; n > 0 {
				rate = (hist[n] - hist[0]) / n
			}
			line := fmt.Sprintf("%6.0fs  sent %6d/%d  %5d sent/s  %5d committed/s (%ds avg)  %s  errors %d",
				pr.Elapsed.Seconds(), pr.Attempted, pr.Expected, pr.Attempted-lastSent, rate, window, status, pr.Errors)
			lastSent = pr.Attempted
			if p.tty {
				fmt.Fprintf(p.out, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(p.out, line)
			}
		}
	}()
	return done
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
