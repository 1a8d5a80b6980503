package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/nfq"
)

// childExit carries a child's exit status out of `node linkem-agent`.
type childExit struct{ code int }

func (e childExit) Error() string { return fmt.Sprintf("node exited with status %d", e.code) }

// newLinkemAgentCmd is the hidden `benchnet node linkem-agent`: the egress
// NFQUEUE agent (internal/linkem/nfq) for runners whose nodes run apart. It
// runs in the node's network namespace (needs NET_ADMIN), emulates the
// node's links to each destination, serves its counters and lateness
// histogram as Prometheus text on --metrics, and runs the node's own argv
// (after --) as its child, whose exit status it returns.
func newLinkemAgentCmd() *cobra.Command {
	var (
		links    []string
		metrics  string
		queue    uint16
		seed     uint64
		rate     string
		tool     string
		realtime bool
		capture  []string
		ingress  bool
	)
	c := &cobra.Command{
		Use:   "linkem-agent --link [NAME=]DST,delay=D[,jitter=J][,loss=P%][,rate=R]... [--metrics ADDR] [-- NODE ARGV...]",
		Short: "Emulate this namespace's egress links with an NFQUEUE agent, around the node's own process",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return usageError{fmt.Errorf("linkem-agent: the node's argv goes after --, not %q", args[0])}
			}
			cfg := nfq.Config{Queue: queue, Seed: seed, Realtime: realtime, Ingress: ingress}
			for _, c := range capture {
				p, err := netip.ParsePrefix(c)
				if err != nil {
					return usageError{fmt.Errorf("--capture %q: want a CIDR", c)}
				}
				cfg.Capture = append(cfg.Capture, p)
			}
			// One parser for the flags and the control port (PUT /links).
			tb, err := nfq.ParseTable(linkem.AgentTable{Links: links, Rate: rate})
			if err != nil {
				return usageError{err}
			}
			cfg.Links, cfg.Rate = tb.Links, tb.Rate
			return runLinkemAgent(cmd.Context(), cfg, tool, metrics, args)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&links, "link", nil, "a destination's link: [NAME=]ADDR|CIDR|HOST[,delay=50ms][,jitter=2ms][,loss=1%][,rate=10mbit][,queue=BYTES] (repeat; a HOST is resolved by DNS and needs --capture)")
	f.StringArrayVar(&capture, "capture", nil, "also queue packets to this CIDR (the network HOST links' addresses are in), repeat")
	f.StringVar(&metrics, "metrics", "", "serve counters and the lateness histogram as Prometheus text on this address (/metrics), and the link table (GET and PUT /links)")
	f.Uint16Var(&queue, "queue", 0, "NFQUEUE number")
	f.Uint64Var(&seed, "seed", 1, "seed of the loss and jitter draws")
	f.StringVar(&rate, "rate", "", "the node's egress rate over all emulated links (\"100mbit\"; default unlimited)")
	f.StringVar(&tool, "rules", "", "rule tool: netlink, nft or iptables (default: netlink, else nft, else iptables)")
	f.BoolVar(&ingress, "ingress", false, "hold arriving packets by the link of their source (--link names peers); not with --rate (nfq.Config.Ingress)")
	f.BoolVar(&realtime, "realtime", true, "run the verdict thread SCHED_FIFO when privileged")
	return c
}

func runLinkemAgent(ctx context.Context, cfg nfq.Config, tool, metrics string, argv []string) (err error) {
	if len(cfg.Links) == 0 {
		return usageError{errors.New("linkem-agent: no --link")}
	}
	runtime.GOMAXPROCS(nfq.Procs())
	a, err := nfq.Start(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	rules, err := nfq.Rules{Tool: tool, Queue: cfg.Queue, Prefixes: a.Prefixes(), Ingress: cfg.Ingress}.Install(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rules.Remove(context.WithoutCancel(ctx))) }() // before the agent's Close
	fmt.Fprintf(os.Stderr, "linkem-agent: queue %d, %d links, rules by %s, verdict thread %s\n", cfg.Queue, len(cfg.Links), rules.Describe(), a.Sched())
	if metrics != "" {
		ln, err := net.Listen("tcp", metrics)
		if err != nil {
			return fmt.Errorf("linkem-agent: metrics: %w", err)
		}
		// Metrics, lateness and the control port (PUT /links: the harness
		// changes the node's links mid-run through it).
		srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	if len(argv) == 0 {
		return a.Wait(ctx)
	}
	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		return fmt.Errorf("linkem-agent: start the node: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case werr := <-done:
		return childStatus(werr)
	case <-ctx.Done(): // SIGTERM/SIGINT to us: pass it on, wait for the node
		_ = child.Process.Signal(syscall.SIGTERM)
		select {
		case werr := <-done:
			return childStatus(werr)
		case <-time.After(30 * time.Second):
			_ = child.Process.Kill()
			return childStatus(<-done)
		}
	case err := <-a.Err():
		_ = child.Process.Signal(syscall.SIGTERM)
		<-done
		return err
	}
}

// childStatus maps the node's exit onto the agent's: 0 is nil, a status is
// childExit (exitCode returns it as is), a signal 128+n.
func childStatus(err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return childExit{128 + int(ws.Signal())}
		}
		return childExit{ee.ExitCode()}
	}
	return err
}

// newLinkemProbeCmd is the hidden `benchnet node linkem-probe`: from the
// namespace it runs in (a node's task, by docker exec), it times TCP
// connects to each HOST:PORT (SYN out through this node's agent, SYN-ACK
// back through the destination's: the emulated round trip) and prints one
// JSON object per destination: {"dst", "n", "ok", "min_ms", "median_ms",
// "max_ms", "err"}. Tests measure the delay matrix back with it.
func newLinkemProbeCmd() *cobra.Command {
	var count int
	c := &cobra.Command{
		Use:   "linkem-probe [--count N] HOST:PORT...",
		Short: "Time TCP connects to each destination (the emulated round trip)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			enc := json.NewEncoder(cmd.OutOrStdout())
			for _, dst := range args {
				if err := enc.Encode(probeRTT(cmd.Context(), dst, count)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().IntVar(&count, "count", 10, "connects per destination")
	return c
}

type probeResult struct {
	Dst      string  `json:"dst"`
	N        int     `json:"n"`
	OK       int     `json:"ok"`
	MinMs    float64 `json:"min_ms"`
	MedianMs float64 `json:"median_ms"`
	MaxMs    float64 `json:"max_ms"`
	Err      string  `json:"err,omitempty"`
}

func probeRTT(ctx context.Context, dst string, n int) probeResult {
	r := probeResult{Dst: dst, N: n}
	host, port, err := net.SplitHostPort(dst)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	// Resolve once: the connect time is the round trip, not DNS.
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		r.Err = fmt.Sprintf("resolve %s: %v", host, err)
		return r
	}
	target := net.JoinHostPort(addrs[0], port)
	var rtts []time.Duration
	for range n {
		start := time.Now()
		c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", target)
		if err != nil {
			r.Err = err.Error()
			continue
		}
		rtts = append(rtts, time.Since(start))
		_ = c.Close()
		time.Sleep(50 * time.Millisecond)
	}
	r.OK = len(rtts)
	if len(rtts) > 0 {
		slices.Sort(rtts)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		r.MinMs, r.MedianMs, r.MaxMs = ms(rtts[0]), ms(rtts[len(rtts)/2]), ms(rtts[len(rtts)-1])
	}
	return r
}
