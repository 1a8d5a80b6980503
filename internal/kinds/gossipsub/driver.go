package gossipsub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Driver is the gossipsub node kind: benchnet's own executable run as
// `benchnet node gossipsub --config FILE` on every host.
type Driver struct {
	// Executable is the benchnet binary that has the host subcommand
	// (default: os.Executable(), the running benchnet; tests build one).
	Executable string
	client     *http.Client

	pubOnce   sync.Once
	pubClient *http.Client // Publish's: pooled, many requests in flight
}

// Program is the host program's name in Binaries.
const Program = "benchnet"

// ConfigFile is the host's config inside its home.
const ConfigFile = "host.json"

// Binaries is the benchnet executable itself.
func (d *Driver) Binaries(ctx context.Context, p *plan.Testnet, log io.Writer) ([]node.Binary, error) {
	exe := d.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("gossipsub host: own executable: %w", err)
		}
	}
	return []node.Binary{{Release: spec.Release, Program: Program, Path: exe}}, nil
}

// Homes writes every host's config, copies the executable into the run
// directory (so an unprivileged host can run it whatever the harness's own
// path) and makes traces/ writable for the hosts.
func (d *Driver) Homes(ctx context.Context, p *plan.Testnet, bins []node.Binary, env node.Env) error {
	exe := node.Find(bins, spec.Release, Program)
	if err := copyFile(exe, binPath(env), 0o755); err != nil {
		return fmt.Errorf("copy host executable: %w", err)
	}
	traces := env.Dir.Join(rundir.GossipTraceDir)
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return err
	}
	// Hosts may run as nobody: sticky and world-writable, as /tmp, so each
	// creates its own file and no other.
	if err := os.Chmod(traces, 0o1777); err != nil {
		return err
	}
	for _, n := range p.Nodes {
		home := filepath.Join(env.Homes, n.Name)
		if err := os.MkdirAll(home, 0o755); err != nil {
			return err
		}
		data, err := json.MarshalIndent(HostConfig(p, n, rundir.TraceFile(env.Dir, n.Name)), "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(home, ConfigFile), data, 0o644); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}

func binPath(env node.Env) string { return env.Dir.Join("bin", "benchnet") }

// HostConfig is node n's host configuration: its identity from the seed,
// its planned neighbours (it dials those with a higher index, so every
// link is dialled once), the router parameters of the plan.
func HostConfig(p *plan.Testnet, n *plan.Node, trace string) *Config {
	c := &Config{
		Node: n.Name, Index: n.Index, Seed: p.Seed, Addr: n.Addr.String(), Host: n.Host,
		P2PPort: n.P2PPort, ControlPort: n.RPCPort, MetricsPort: n.PrometheusPort,
		Peers: []Peer{}, Trace: trace, TraceBuffer: 1 << 16,
	}
	var tables spec.Tables
	if err := p.KindTables(&tables); err == nil {
		c.Params = tables.Gossipsub
	}
	for _, name := range p.Neighbours(n.Name) {
		o := p.Node(name)
		c.Peers = append(c.Peers, Peer{Name: o.Name, ID: PeerID(p.Seed, o.Index).String(), Addr: o.Addr.String(), Host: o.Host, Port: o.P2PPort, Dial: o.Index > n.Index})
	}
	return c
}

// Processes: one host per node.
func (d *Driver) Processes(n *plan.Node, bins []node.Binary, env node.Env) []infra.Process {
	home := filepath.Join(env.Homes, n.Name)
	return []infra.Process{{
		Node: n.Name, Name: "node", Argv: []string{binPath(env), "node", "gossipsub", "--config", filepath.Join(home, ConfigFile)},
		Dir: home, LogPath: env.Dir.Join(rundir.Logs, n.Name+".log"), Unprivileged: env.Unprivileged, ChownDirs: []string{home},
		// Its trace goes to the run's traces/, outside its home.
		Dirs: []string{env.Dir.Join(rundir.GossipTraceDir)},
	}}
}

// Reset is not supported: a host keeps nothing in its home but its config
// (its identity comes from the seed, its trace goes to traces/), so there is
// no state at genesis to return to, and a wipe-restart would test nothing a
// restart does not. The manifest refuses wipe-restart and [rotate] for
// gossipsub testnets; this answers any other caller.
func (d *Driver) Reset(ctx context.Context, n *plan.Node, bins []node.Binary, env node.Env) error {
	return fmt.Errorf("reset to genesis: %w for gossipsub hosts (a host keeps no state in its home to reset)", node.ErrNotSupported)
}

// Publish asks host n to publish a message through its control endpoint
// (POST /publish?id=&size=, answered 204 once the host published it).
func (d *Driver) Publish(ctx context.Context, n *plan.Node, id string, size int) error {
	d.pubOnce.Do(func() {
		d.pubClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ControlURL(n)+"/publish?id="+url.QueryEscape(id)+"&size="+strconv.Itoa(size), nil)
	if err != nil {
		return err
	}
	resp, err := d.pubClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return nil
}

// ControlURL is node n's control endpoint as the harness reaches it: the
// RPC port's, which is where a runner that publishes ports (swarm)
// reports it (plan.Node.RPCURL).
func ControlURL(n *plan.Node) string { return n.RPCURL() }

// Ready: the host answers and has every planned neighbour connected and
// subscribed to the topic.
func (d *Driver) Ready(ctx context.Context, n *plan.Node) (bool, string) {
	if d.client == nil {
		d.client = &http.Client{Timeout: 2 * time.Second}
	}
	st, err := GetReady(ctx, d.client, n)
	if err != nil {
		return false, "control endpoint not answering: " + err.Error()
	}
	return st.Ready, fmt.Sprintf("%d of %d planned peers connected, %d in the topic", st.Connected, st.Planned, st.Topic)
}

// GetReady asks host n for its state.
func GetReady(ctx context.Context, c *http.Client, n *plan.Node) (*ReadyState, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ControlURL(n)+"/ready", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /ready: %s", resp.Status)
	}
	var st ReadyState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("GET /ready: %w", err)
	}
	return &st, nil
}

// Waiting implements node.Driver.
func (d *Driver) Waiting() string { return "peered with every planned neighbour" }

func copyFile(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var _ node.Driver = (*Driver)(nil)

// newDriver is the kind's node.Driver for a host.
func newDriver(c node.Config) node.Driver { return &Driver{Executable: c.Executable} }
