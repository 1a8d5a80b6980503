package gossipsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/benchnet/benchnet/internal/rundir"
)

// messageID is the hosts' message-ID function: the payload's first
// MsgIDLen bytes, which the harness fills with the message's ID.
func messageID(m *pb.Message) string {
	d := m.GetData()
	if len(d) > MsgIDLen {
		d = d[:MsgIDLen]
	}
	return string(d)
}

// Params are the router parameters of c: the library's defaults with the
// manifest's D, Dlo, Dhi, Dlazy and heartbeat; Dout and Dscore are lowered
// where a small D would make the library refuse its own defaults.
func (c *Config) params() pubsub.GossipSubParams {
	p := pubsub.DefaultGossipSubParams()
	g := c.Params
	p.D, p.Dlo, p.Dhi, p.Dlazy = g.D, g.Dlo, g.Dhi, g.Dlazy
	if g.Heartbeat.Duration > 0 {
		p.HeartbeatInterval = g.Heartbeat.Duration
	}
	p.Dout = max(0, min(p.Dout, p.Dlo-1, p.D/2-1))
	p.Dscore = min(p.Dscore, p.Dhi)
	return p
}

// ReadyState is GET /ready's answer.
type ReadyState struct {
	Node      string `json:"node"`
	Planned   int    `json:"planned"`   // planned neighbours
	Connected int    `json:"connected"` // of them, connected now
	Topic     int    `json:"topic"`     // peers known in the topic
	Ready     bool   `json:"ready"`     // every planned neighbour connected and in the topic
	Published int64  `json:"published"`
	Traced    int64  `json:"traced"`      // events written to the trace
	Dropped   int64  `json:"trace_drops"` // events the tracer dropped
}

// Run is the host: it listens, peers with its planned neighbours, serves
// the control and metrics endpoints and traces until ctx ends, then
// flushes the trace.
func Run(ctx context.Context, c *Config, log io.Writer) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	priv := Key(c.Seed, c.Index)
	self, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return fmt.Errorf("peer id: %w", err)
	}
	names := map[peer.ID]string{self: c.Node}
	var dial []peer.AddrInfo
	planned := map[peer.ID]bool{}
	for _, p := range c.Peers {
		id, err := peer.Decode(p.ID)
		if err != nil {
			return fmt.Errorf("peer %s: id %q: %w", p.Name, p.ID, err)
		}
		names[id], planned[id] = p.Name, true
		if p.Dial {
			a, err := ma.NewMultiaddr(p.multiaddr())
			if err != nil {
				return fmt.Errorf("peer %s: address: %w", p.Name, err)
			}
			dial = append(dial, peer.AddrInfo{ID: id, Addrs: []ma.Multiaddr{a}})
		}
	}

	// go-libp2p's own metrics (swarm, identify, …) plus the Go and process
	// collectors, served for the harness's collector as CometBFT's are, cut
	// to ServedFamilies (metrics.go says why).
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	h, err := libp2p.New(
		libp2p.Identity(priv),
		libp2p.ListenAddrStrings("/ip4/"+c.listenIP()+"/tcp/"+strconv.Itoa(c.P2PPort)),
		// TCP only, with the default security (Noise, TLS) and muxer (yamux).
		libp2p.Transport(tcp.NewTCPTransport),
		// The host is the subject under test: no resource limits or relays
		// of its own between it and the topology the plan gave it.
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.DisableRelay(),
		libp2p.PrometheusRegisterer(reg),
	)
	if err != nil {
		return fmt.Errorf("libp2p host: %w", err)
	}
	defer h.Close()
	// The topology is the experiment: the connection manager (go-libp2p's
	// default trims past 192 connections, to 160) must never cut a planned
	// link, whatever the degree (a full mesh of 200 hosts has 199).
	for id := range planned {
		h.ConnManager().Protect(id, "benchnet-topology")
	}

	if err := ensureDir(c.Trace); err != nil {
		return err
	}
	// A restarted host (a [[perturb]] kill or restart) appends to the trace
	// of its earlier life, which the analysis still needs; a SIGKILL may
	// have cut that trace's last row, which is dropped first so the new
	// rows start on a line of their own.
	if err := trimCutRow(c.Trace); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	w, err := rundir.GossipTraceCSV.Append(c.Trace)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	w.StartFlushing(500 * time.Millisecond)
	tr := newTracer(c.Node, self, names, w, c.TraceBuffer)
	defer func() {
		if cerr := tr.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("trace: %w", cerr))
		}
		fmt.Fprintf(log, "trace: %d events written, %d dropped by the tracer\n", tr.written.Load(), tr.dropped.Load())
	}()
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "benchnet_gossip_trace_dropped_total", Help: "Trace events the host's tracer dropped (buffer full).",
	}, func() float64 { return float64(tr.dropped.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "benchnet_gossip_trace_events_total", Help: "Trace events written to the host's trace file.",
	}, func() float64 { return float64(tr.written.Load()) }))

	ps, err := pubsub.NewGossipSub(ctx, h,
		pubsub.WithGossipSubParams(c.params()),
		pubsub.WithFloodPublish(c.Params.FloodPublish),
		pubsub.WithPeerOutboundQueueSize(c.Params.OutboundQueue),
		pubsub.WithValidateQueueSize(c.Params.ValidateQueue),
		pubsub.WithMessageIdFn(messageID),
		pubsub.WithPeerExchange(false),
		pubsub.WithRawTracer(tr),
	)
	if err != nil {
		return fmt.Errorf("gossipsub: %w", err)
	}
	topic, err := ps.Join(Topic)
	if err != nil {
		return fmt.Errorf("join %s: %w", Topic, err)
	}
	defer topic.Close()
	sub, err := topic.Subscribe()
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", Topic, err)
	}
	defer sub.Cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		// Deliveries are traced by the tracer; the subscription is read
		// only so its queue never fills (that would be "undeliverable").
		defer wg.Done()
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
	for _, ai := range dial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keepConnected(ctx, h, ai)
		}()
	}

	var published int64
	var pubMu sync.Mutex
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "benchnet_gossip_published_total", Help: "Messages this host published on the harness's request.",
	}, func() float64 { pubMu.Lock(); defer pubMu.Unlock(); return float64(published) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "benchnet_gossip_planned_peers", Help: "Neighbours the plan's topology gives this host.",
	}, func() float64 { return float64(len(planned)) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "benchnet_gossip_planned_peers_connected", Help: "Planned neighbours connected now.",
	}, func() float64 {
		n := 0
		for id := range planned {
			if h.Network().Connectedness(id) == network.Connected {
				n++
			}
		}
		return float64(n)
	}))
	state := func() ReadyState {
		in := map[peer.ID]bool{}
		for _, p := range topic.ListPeers() {
			in[p] = true
		}
		s := ReadyState{Node: c.Node, Planned: len(planned), Topic: len(in), Traced: tr.written.Load(), Dropped: tr.dropped.Load()}
		inTopic := 0
		for id := range planned {
			if h.Network().Connectedness(id) == network.Connected {
				s.Connected++
			}
			if in[id] {
				inTopic++
			}
		}
		s.Ready = s.Connected == s.Planned && inTopic == s.Planned
		pubMu.Lock()
		s.Published = published
		pubMu.Unlock()
		return s
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(state())
	})
	mux.HandleFunc("POST /publish", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if len(id) != MsgIDLen || err != nil || size < MsgIDLen || size > 1<<20 {
			http.Error(w, fmt.Sprintf("want id of %d characters and size %d..%d", MsgIDLen, MsgIDLen, 1<<20), http.StatusBadRequest)
			return
		}
		data := make([]byte, size)
		copy(data, id)
		for i := MsgIDLen; i < size; i++ {
			data[i] = 'x'
		}
		tr.record(rundir.GossipPublish, id, "", "", size)
		if err := topic.Publish(r.Context(), data); err != nil {
			http.Error(w, "publish: "+err.Error(), http.StatusInternalServerError)
			return
		}
		pubMu.Lock()
		published++
		pubMu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	ctl := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	met := &http.Server{Handler: promhttp.HandlerFor(servedGatherer(reg), promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	serve := func(srv *http.Server, port int) error {
		ln, err := net.Listen("tcp", net.JoinHostPort(c.listenIP(), strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("listen :%d: %w", port, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = srv.Serve(ln)
		}()
		return nil
	}
	if err := serve(ctl, c.ControlPort); err != nil {
		return err
	}
	defer ctl.Close()
	if c.MetricsPort != 0 {
		if err := serve(met, c.MetricsPort); err != nil {
			return err
		}
		defer met.Close()
	}
	fmt.Fprintf(log, "host %s (%s) on %s: %d planned peers, dialing %d\n", c.Node, self, h.Addrs(), len(planned), len(dial))
	<-ctx.Done()
	fmt.Fprintf(log, "host %s stopping: %d published\n", c.Node, state().Published)
	return nil
}

// listenIP is the address the host's ports listen on: its own, or every
// address of its namespace when peers dial it by name.
func (c *Config) listenIP() string {
	if c.Host != "" {
		return "0.0.0.0"
	}
	return c.Addr
}

// multiaddr is where the host dials p: by name (/dns4, resolved at each
// dial, so a neighbour whose name does not resolve until its task runs is
// found on a later retry) or by address.
func (p Peer) multiaddr() string {
	if p.Host != "" {
		return "/dns4/" + p.Host + "/tcp/" + strconv.Itoa(p.Port)
	}
	return "/ip4/" + p.Addr + "/tcp/" + strconv.Itoa(p.Port)
}

// keepConnected dials ai until connected and redials when the connection
// drops (a restarted neighbour): retries back off up to 500 ms; a live
// connection is checked every 500 ms.
func keepConnected(ctx context.Context, h host.Host, ai peer.AddrInfo) {
	backoff := 50 * time.Millisecond
	for {
		wait := 500 * time.Millisecond
		if h.Network().Connectedness(ai.ID) != network.Connected {
			// The swarm backs a failed peer off for 5 s + attempts² s: a
			// neighbour that was not listening yet (95 hosts start over
			// seconds) would then stay unpeered long after it is up. Static
			// peering retries on its own schedule instead.
			if sw, ok := h.Network().(*swarm.Swarm); ok {
				sw.Backoff().Clear(ai.ID)
			}
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := h.Connect(dctx, ai)
			cancel()
			if err != nil {
				wait, backoff = backoff, min(2*backoff, 500*time.Millisecond)
			} else {
				backoff = 50 * time.Millisecond
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
