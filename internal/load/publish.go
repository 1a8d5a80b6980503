package load

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The gossip lab's workload: the harness asks hosts to publish, message i
// at t0 + i/rate network-wide, from a publisher drawn from the seed. Every
// request is recorded in published.csv with its intended, sent and answered
// times, and the run certifies itself with the tx load's limits (ConnMeter
// over the whole schedule, as one connection).

// PublishMsg is one scheduled message.
type PublishMsg struct {
	Seq       uint64
	ID        string // MessageID(seed, seq)
	Publisher string // node name
	Offset    time.Duration
}

// MessageID is message seq's ID for a seed: 16 hex digits of
// SHA-256("benchnet-msg/<seed>/<seq>"), which the hosts read back from the
// payload's head.
func MessageID(seed int64, seq uint64) string {
	s := sha256.Sum256([]byte("benchnet-msg/" + strconv.FormatInt(seed, 10) + "/" + strconv.FormatUint(seq, 10)))
	return hex.EncodeToString(s[:8])
}

// PublishCount is how many messages p asks for: Count, or rate × duration.
func PublishCount(p manifest.Publish) int {
	if p.Count > 0 {
		return p.Count
	}
	return TicksWithin(Constant{R: p.Rate}, p.Duration.Duration)
}

// PublishSchedule is every message of p over nodes (the plan's node names
// in plan order): exactly PublishCount messages, message i at i/rate, from
// p.Source or, for "random", a node drawn from the seed's own stream (a
// different seed draws differently; the topology's stream is not touched).
func PublishSchedule(p manifest.Publish, seed int64, nodes []string) ([]PublishMsg, error) {
	if errs := manifest.CheckPublish(p); len(errs) > 0 {
		return nil, fmt.Errorf("publish: %s", errs[0])
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("publish: no nodes")
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7075626c697368)) // "publish"
	n := PublishCount(p)
	out := make([]PublishMsg, n)
	sched := Constant{R: p.Rate}
	for i := range out {
		pub := p.Source
		if pub == manifest.DefaultPublishSource {
			pub = nodes[rng.IntN(len(nodes))]
		}
		out[i] = PublishMsg{Seq: uint64(i), ID: MessageID(seed, uint64(i)), Publisher: pub, Offset: sched.Offset(i)}
	}
	return out, nil
}

// PublishFunc asks node to publish message id of size bytes; it returns
// once the host answered.
type PublishFunc func(ctx context.Context, node, id string, size int) error

// MaxPublishInFlight bounds concurrent publish requests: past it the pacer
// waits, and the lag it records says the harness fell behind.
const MaxPublishInFlight = 256

// RunPublish paces sched from t0 on clk, calls publish for every message
// without waiting for the previous answer, writes every request to w and
// returns the generator's own summary (load.json's type; its one "conn" is
// the whole network's schedule).
func RunPublish(ctx context.Context, clk Clock, t0 time.Time, sched []PublishMsg, size int, publish PublishFunc, w *rundir.Writer[rundir.Published]) (*rundir.LoadSummary, error) {
	if clk == nil {
		clk = realClock{}
	}
	sem := make(chan struct{}, MaxPublishInFlight)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		meter ConnMeter
		sum   = &rundir.LoadSummary{Start: t0, Expected: len(sched)}
		werr  error
	)
	record := func(r *rundir.Published) {
		mu.Lock()
		defer mu.Unlock()
		meter.Add(&rundir.Sent{Seq: r.Seq, Intended: r.Intended, SentAt: r.SentAt, Ack: r.Ack, Result: r.Result})
		sum.Attempted++
		if r.Result == rundir.ResultOK {
			sum.OK++
			sum.Sent++
		} else {
			sum.SendErrors++
		}
		if end := time.Unix(0, r.SentAt); end.After(sum.End) {
			sum.End = end
		}
		if err := w.Write(r); err != nil && werr == nil {
			werr = err
		}
	}
	_, perr := Pace(ctx, clk, t0, offsets(sched), len(sched), func(i int, due time.Time) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m := sched[i]
			r := &rundir.Published{Seq: m.Seq, MsgID: m.ID, Publisher: m.Publisher, Intended: due.UnixNano(), SentAt: clk.Now().UnixNano(), Result: rundir.ResultOK}
			// The request outlives an interrupt by a little: its answer is
			// what the record needs.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			err := publish(rctx, m.Publisher, m.ID, size)
			cancel()
			r.Ack = clk.Now().UnixNano()
			if err != nil {
				r.Result, r.Log, r.Ack = rundir.ResultSendError, err.Error(), 0
			}
			record(r)
		}()
	})
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	conn, why := meter.Summary("network", 0, len(sched))
	sum.Conns = []rundir.LoadConn{conn}
	sum.Valid = why == ""
	if !sum.Valid {
		sum.Invalid = append(sum.Invalid, "publish "+why)
	}
	if perr != nil {
		return sum, perr
	}
	return sum, werr
}

// offsets is sched as a pacer Schedule.
type offsets []PublishMsg

func (o offsets) Offset(i int) time.Duration { return o[i].Offset }
func (o offsets) Rate(i int) float64 {
	if i+1 < len(o) && o[i+1].Offset > o[i].Offset {
		return 1 / (o[i+1].Offset - o[i].Offset).Seconds()
	}
	return 0
}
