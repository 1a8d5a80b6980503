package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/benchnet/benchnet/internal/cometrpc"
	"github.com/benchnet/benchnet/internal/harvest"
	"github.com/benchnet/benchnet/internal/load"
)

// progress prints one line per second during the load: elapsed, sent/s,
// committed/s, height, mempool. On a terminal the line refreshes in place;
// otherwise (CI logs, pipes) each second is a plain line.
type progress struct {
	out    io.Writer
	tty    bool
	runner *load.Runner
	node   harvest.Node
	poller *harvest.MempoolPoller
	cancel context.CancelFunc
	ctx    context.Context
}

func newProgress(out io.Writer, r *load.Runner, node harvest.Node, p *harvest.MempoolPoller) *progress {
	ctx, cancel := context.WithCancel(context.Background())
	return &progress{out: out, tty: isTerminal(out), runner: r, node: node, poller: p, ctx: ctx, cancel: cancel}
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
		c := cometrpc.New(p.node.URL)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastSent int
		var lastHeight int64
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
			committed := 0
			qctx, cancel := context.WithTimeout(p.ctx, 800*time.Millisecond)
			st, err := c.Status(qctx)
			height := lastHeight
			if err == nil {
				height = st.Height
				if lastHeight > 0 && height > lastHeight {
					// num_txs of the blocks sealed this second: all txs, ours
					// and anyone's, but during a run they are ours.
					if metas, err := c.BlockMetas(qctx, lastHeight+1, min(height, lastHeight+cometrpc.MaxBlockMetas)); err == nil {
						for _, m := range metas {
							committed += m.NumTxs
						}
					}
				}
				lastHeight = height
			}
			cancel()
			cum += committed
			hist = append(hist, cum)
			if len(hist) > window+1 {
				hist = hist[1:]
			}
			rate := 0
			if n := len(hist) - 1; n > 0 {
				rate = (hist[n] - hist[0]) / n
			}
			line := fmt.Sprintf("%6.0fs  sent %6d/%d  %5d sent/s  %5d committed/s (%ds avg)  height %d  mempool peak %d  errors %d",
				pr.Elapsed.Seconds(), pr.Attempted, pr.Expected, pr.Attempted-lastSent, rate, window, height, p.poller.Peak(), pr.Errors)
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
