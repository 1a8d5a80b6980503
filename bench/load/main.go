// Command load benchmarks benchnet's load generator (not a test; see
// bench/README.md):
//
//	(a) pacing accuracy: 1000 tx/s for 10 s over one websocket connection to
//	    an in-process JSON-RPC sink that answers broadcast_tx_async at once:
//	    inter-send error p50/p99, lag, the largest burst beyond the schedule,
//	    and that exactly the configured count was sent;
//	(b) maximum throughput of ours vs CometBFT's `loadtime load` with the same
//	    connection count and tx size, against -node (a running CometBFT node)
//	    or, without -node, against the in-process sink; needs -loadtime.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/osched"
	"github.com/benchnet/benchnet/internal/rundir"
)

func main() {
	rate := flag.Float64("rate", 1000, "(a) tx/s of the pacing run")
	dur := flag.Duration("dur", 10*time.Second, "(a) duration of the pacing run")
	node := flag.String("node", "", "(b) RPC URL of a running CometBFT node, e.g. http://10.0.0.2:26657 (default: in-process sink)")
	loadtime := flag.String("loadtime", "", "(b) path of CometBFT's loadtime `load` binary (go install github.com/cometbft/cometbft/test/loadtime/cmd/load@v1.0.1)")
	conns := flag.Int("c", 1, "(b) connections, the same for both tools")
	window := flag.Int("window", 5, "(b) seconds each tool sends for")
	size := flag.Int("size", 1024, "tx size in bytes")
	skipA := flag.Bool("skip-pacing", false, "skip (a)")
	neighbour := flag.Int("neighbour", 2*runtime.NumCPU(), "(a) spinning processes (`yes`) started as a neighbour for the second and third pacing runs (0: idle run only)")
	repeats := flag.Int("repeats", 1, "(a) run the conditions this many times, interleaved")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole benchmark to this file")
	flag.Parse()
	ctx := context.Background()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	sink := newSink()
	srv := httptest.NewServer(sink)
	defer srv.Close()

	if !*skipA {
		// Idle, then beside a CPU-bound neighbour with the real-time pacing
		// thread (the default), then with it off (ordinary threads), so the
		// neighbour's effect and what the priority buys are both shown.
		type condition struct {
			hogs     int
			ordinary bool
		}
		conds := []condition{{0, false}}
		if *neighbour > 0 {
			conds = append(conds, condition{*neighbour, false}, condition{*neighbour, true})
		}
		for range *repeats {
			for _, c := range conds {
				if err := pacingWith(ctx, srv.URL, *rate, *dur, *size, c.hogs, c.ordinary); err != nil {
					log.Fatal(err)
				}
			}
		}
	}
	if *loadtime == "" {
		fmt.Println("(b) skipped: pass -loadtime PATH (and -node URL for a real node)")
		return
	}
	target, where := srv.URL, "in-process sink"
	if *node != "" {
		target, where = *node, *node
	}
	cpu0 := selfCPU()
	ours, err := oursMax(ctx, target, *conns, *window, *size, sink, *node == "")
	if err != nil {
		log.Fatal(err)
	}
	oursCPU := selfCPU() - cpu0
	theirs, theirsCPU, err := theirsMax(ctx, *loadtime, target, *conns, *window, *size, sink, *node == "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("(b) max sustained rate against %s, c=%d, %d-byte txs, %d s window:\n", where, *conns, *size, *window)
	fmt.Printf("    benchnet load:  %9.0f tx/s\n", ours)
	fmt.Printf("    loadtime load:  %9.0f tx/s\n", theirs)
	fmt.Printf("    ratio ours/theirs: %.2f (target >= 2)\n", ours/theirs)
	// When the node, not the client, is the bottleneck both rates are the
	// node's; what the client costs is then its CPU per tx, taken from the
	// cores the node needs. (In-process sink: ours includes the sink's CPU.)
	ourPer := 1e6 * oursCPU / (ours * float64(*window))
	theirPer := 1e6 * theirsCPU / (theirs * float64(*window))
	fmt.Printf("    client CPU per tx: benchnet %.1f µs, loadtime %.1f µs, ratio theirs/ours %.2f\n", ourPer, theirPer, theirPer/ourPer)
}

// pacingWith runs part (a) beside hogs spinning processes at normal
// priority (none: idle), the pacer on an ordinary thread if ordinary.
func pacingWith(ctx context.Context, url string, rate float64, dur time.Duration, size, hogs int, ordinary bool) error {
	thread := "real-time pacing thread"
	if ordinary {
		thread = "ordinary pacing thread, harness at nice 0"
		// A real-time run before this one left the process at
		// load.HarnessNice; the ordinary condition is the harness without
		// any priority measure.
		if err := osched.RaiseProcess(0); err != nil {
			return err
		}
	}
	cond := "idle"
	if hogs > 0 {
		stop, err := startNeighbour(ctx, hogs)
		if err != nil {
			return err
		}
		defer stop()
		time.Sleep(time.Second) // let the neighbour take the CPUs
		cond = fmt.Sprintf("neighbour: %d spinning processes", hogs)
	}
	fmt.Printf("(a) %s, %s, load average %s\n", cond, thread, loadavg())
	return pacing(ctx, url, rate, dur, size, ordinary)
}

// startNeighbour starts n CPU-bound processes (`yes` writing to /dev/null)
// at normal priority, anywhere on the machine: a neighbour such as a test
// run. stop kills and reaps them.
func startNeighbour(ctx context.Context, n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.CommandContext(ctx, "yes") // stdout nil: /dev/null
		if err := c.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("neighbour: %w", err)
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// loadavg is the 1-minute load average ("?" when unreadable).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := bytes.Fields(b); err == nil && len(f) > 0 {
		return string(f[0])
	}
	return "?"
}

// pacing is part (a).
func pacing(ctx context.Context, url string, rate float64, dur time.Duration, size int, ordinary bool) error {
	var mu sync.Mutex
	var recs []rundir.Sent
	sink := load.SinkFunc(func(s rundir.Sent) error { mu.Lock(); recs = append(recs, s); mu.Unlock(); return nil })
	cfg := load.Config{RunID: "bench", Rate: rate, Connections: 1, Duration: dur, Size: size, Target: "single", Ordinary: ordinary}
	want, err := load.Expected(cfg, []load.Target{{Node: "sink", RPCURL: url}})
	if err != nil {
		return err
	}
	cpu0 := selfCPU()
	sum, err := load.Run(ctx, cfg, []load.Target{{Node: "sink", RPCURL: url}}, sink)
	if err != nil {
		return err
	}
	cpu := selfCPU() - cpu0
	slices.SortFunc(recs, func(a, b rundir.Sent) int { return int(a.Seq) - int(b.Seq) })
	var errs, lags []int64
	for i := range recs {
		lags = append(lags, recs[i].SentAt-recs[i].Intended)
		if i > 0 {
			e := (recs[i].SentAt - recs[i-1].SentAt) - (recs[i].Intended - recs[i-1].Intended)
			errs = append(errs, abs(e))
		}
	}
	slices.Sort(errs)
	slices.Sort(lags)
	for _, r := range recs {
		if r.Result != rundir.ResultOK {
			fmt.Printf("    seq %d: %s %d %s\n", r.Seq, r.Result, r.Code, r.Log)
		}
	}
	ok := "OK"
	if len(recs) != want || sum.Attempted != want || sum.OK != want {
		ok = "MISMATCH"
	}
	fmt.Printf("(a) pacing: %.0f tx/s for %v, 1 websocket connection, %d-byte txs, in-process sink\n", rate, dur, size)
	fmt.Printf("    exactly %d sent: %s (records %d, ok %d, send errors %d)\n", want, ok, len(recs), sum.OK, sum.SendErrors)
	fmt.Printf("    inter-send error: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", ms(q(errs, .5)), ms(q(errs, .99)), ms(q(errs, 1)))
	fmt.Printf("    lag behind schedule: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", ms(q(lags, .5)), ms(q(lags, .99)), ms(q(lags, 1)))
	fmt.Printf("    CPU of this process (generator and sink): %.1f %% of a core, %.1f µs per tx\n", 100*cpu/dur.Seconds(), 1e6*cpu/float64(want))
	fmt.Printf("    max burst: %d txs sent within 1 ms beyond the schedule's count for that millisecond\n", maxBurst(recs))
	fmt.Printf("    achieved %.1f tx/s (target %.1f), valid=%v %v\n", sum.Conns[0].Achieved, sum.Conns[0].TargetRate, sum.Valid, sum.Invalid)
	return nil
}

// maxBurst is the largest excess, over any 1 ms window starting at a send,
// of actual sends over scheduled sends in that window.
func maxBurst(recs []rundir.Sent) int {
	sent := make([]int64, len(recs))
	intended := make([]int64, len(recs))
	for i, r := range recs {
		sent[i], intended[i] = r.SentAt, r.Intended
	}
	slices.Sort(sent)
	slices.Sort(intended)
	best := 0
	for i := range sent {
		end := sent[i] + int64(time.Millisecond)
		a, _ := slices.BinarySearch(sent, end)
		lo, _ := slices.BinarySearch(intended, sent[i])
		hi, _ := slices.BinarySearch(intended, end)
		best = max(best, (a-i)-(hi-lo))
	}
	return best
}

// oursMax asks for far more than can be sent and counts what went out in
// the window.
func oursMax(ctx context.Context, url string, c, window, size int, sink *sinkServer, local bool) (float64, error) {
	cfg := load.Config{RunID: "max", Rate: 2e6, Connections: c, Duration: time.Duration(window) * time.Second,
		Size: size, Target: "single", Format: "loadtime", Drain: 2 * time.Second}
	var n atomic.Int64
	counter := load.SinkFunc(func(rundir.Sent) error { n.Add(1); return nil })
	wctx, cancel := context.WithTimeout(ctx, time.Duration(window)*time.Second)
	defer cancel()
	sink.reset()
	start := time.Now()
	sum, err := load.Run(wctx, cfg, []load.Target{{Node: "n", RPCURL: url}}, counter)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return 0, err
	}
	el := time.Since(start).Seconds()
	if local {
		return sink.rate(), nil
	}
	return float64(sum.Attempted-sum.SendErrors) / min(el, float64(window)), nil
}

// theirsMax runs loadtime load at a rate it cannot reach and reads what it
// reports (and, locally, what the sink received).
func theirsMax(ctx context.Context, bin, url string, c, window, size int, sink *sinkServer, local bool) (rate, cpu float64, err error) {
	rate, err = theirsRun(ctx, bin, url, c, window, size, sink, local, &cpu)
	return rate, cpu, err
}

// selfCPU is this process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tvSec(ru.Utime) + tvSec(ru.Stime)
}

func tvSec(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

func theirsRun(ctx context.Context, bin, url string, c, window, size int, sink *sinkServer, local bool, cpu *float64) (float64, error) {
	dir, err := os.MkdirTemp("", "loadtime")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	stats := filepath.Join(dir, "stats.csv")
	ws := "ws" + url[len("http"):] + "/websocket"
	sink.reset()
	cmd := exec.CommandContext(ctx, bin, "-c", strconv.Itoa(c), "-T", strconv.Itoa(window), "-r", "2000000",
		"-s", strconv.Itoa(size), "--broadcast-tx-method", "async", "--endpoints", ws, "--stats-output", stats)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("loadtime load: %w\n%s", err, out.Bytes())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		*cpu = tvSec(ru.Utime) + tvSec(ru.Stime)
	}
	if local {
		return sink.rate(), nil
	}
	f, err := os.ReadFile(stats)
	if err != nil {
		return 0, fmt.Errorf("loadtime stats: %w\n%s", err, out.Bytes())
	}
	rows, err := csv.NewReader(bytes.NewReader(f)).ReadAll()
	if err != nil {
		return 0, fmt.Errorf("loadtime stats: %w", err)
	}
	for _, r := range rows {
		if r[0] == "avg_tx_rate" {
			return strconv.ParseFloat(r[1], 64)
		}
	}
	return 0, fmt.Errorf("loadtime stats: no avg_tx_rate in %s", f)
}

// sinkServer answers every JSON-RPC request on /websocket at once with an
// empty success, echoing the id, and counts what it received.
type sinkServer struct {
	mu          sync.Mutex
	n           int64
	first, last time.Time
}

func newSink() *sinkServer { return &sinkServer{} }

func (s *sinkServer) reset() {
	s.mu.Lock()
	s.n, s.first, s.last = 0, time.Time{}, time.Time{}
	s.mu.Unlock()
}

func (s *sinkServer) rate() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n < 2 {
		return 0
	}
	return float64(s.n-1) / s.last.Sub(s.first).Seconds()
}

var upgrader = websocket.Upgrader{ReadBufferSize: 1 << 16, WriteBufferSize: 1 << 16}

func (s *sinkServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	var resp []byte
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		s.mu.Lock()
		if s.n == 0 {
			s.first = now
		}
		s.n++
		s.last = now
		s.mu.Unlock()
		resp = append(resp[:0], `{"jsonrpc":"2.0","id":`...)
		resp = append(resp, jsonID(msg)...)
		resp = append(resp, `,"result":{"code":0,"data":"","log":"","codespace":"","hash":""}}`...)
		if err := c.WriteMessage(websocket.TextMessage, resp); err != nil {
			return
		}
	}
}

// jsonID cuts the id value out of a request without decoding it all.
func jsonID(msg []byte) []byte {
	i := bytes.Index(msg, []byte(`"id":`))
	if i < 0 {
		return []byte("null")
	}
	v := msg[i+5:]
	j := bytes.IndexAny(v, ",}")
	if j < 0 {
		return []byte("null")
	}
	return bytes.TrimSpace(v[:j])
}

func q(s []int64, p float64) int64 {
	if len(s) == 0 {
		return 0
	}
	return s[min(int(p*float64(len(s)-1)+0.5), len(s)-1)]
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
