// Package capacity tells, before anything starts, whether a testnet fits on
// this machine: the idle CPU and memory of one node of the release (measured
// on an earlier up and cached, else a stated default), times the nodes, plus
// what every peer connection adds, against the machine's cores and
// available memory. It also holds the defaults large testnets get.
package capacity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// Profile is what one idle node of a release costs.
type Profile struct {
	Release string  `json:"release"`
	CPU     float64 `json:"cpu_cores"` // idle CPU of one node, in cores
	RSS     int64   `json:"rss_bytes"` // resident memory of one node
	Peers   float64 `json:"peers"`     // mean peers of the nodes measured
	Nodes   int     `json:"nodes"`     // how many nodes the sample had
	// Measured is when (zero: the built-in default, not measured here).
	Measured time.Time `json:"measured,omitzero"`
}

// The cost model, calibrated on this 2-core machine (issue 14): a node's CPU
// is a fixed idle part, a part per peer connection, and a part per height it
// processes, which grows with the validators whose votes it handles. Fitted
// to the quickstart (4 validators, ~0.05 cores a node at ~0.9 blocks/s) and
// two 64-node testnets with the large timeouts: 62 validators and 2 seeds
// over PEX (~0.2 blocks/s) and a full mesh on a single-node swarm (2016
// links: ready in 261 s, 0.042 blocks/s, load average 204). Large defaults slow consensus down (timeout_commit 2s), so a
// testnet that would need more cores than the machine has at the nominal
// block rate still fits when the rate the machine can sustain is above
// MinRate: a slower chain, stated before up, rather than a refusal.
const (
	CPUFixed     = 0.01    // cores per node, no consensus
	CPUPerPeer   = 0.00025 // cores per node per peer (pings, gossip bookkeeping)
	CPUPerHeight = 0.0397  // core-seconds per node per height, plus
	CPUPerVote   = 0.00107 // core-seconds per node per height per validator
	RSSPerPeer   = 1 << 20 // bytes per node per peer
	// MinRate is the slowest chain (blocks/s) a testnet may be predicted to
	// make on this machine and still be started.
	MinRate = 0.1
	// quickstartCPU is what the model predicts for a quickstart node; a
	// measured profile scales the model by measured/quickstartCPU (a faster
	// or slower machine than the one it was fitted on).
	quickstartCPU = CPUFixed + 3*CPUPerPeer + 0.9*(CPUPerHeight+4*CPUPerVote)
)

// runnerRSS is memory per node outside the node's process, as the runner
// declares it (measured with the quickstart: a container's shim, a swarm
// task's port proxies).
func runnerRSS(runner string) int64 {
	r, _ := caps.Of(runner)
	return r.NodeOverheadRSS
}

// Default is used until a release was measured here: the quickstart's
// nodes idle at ~38 MiB and 0.044 (local) to 0.055 (docker) cores here.
func Default(rel string) Profile {
	return Profile{Release: rel, CPU: 0.05, RSS: 40 << 20, Peers: 3, Nodes: 4}
}

// CacheDirEnv overrides where measured profiles are kept.
const CacheDirEnv = "BENCHNET_CAPACITY_DIR"

func cacheDir() string {
	if d := os.Getenv(CacheDirEnv); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "benchnet", "capacity")
}

func cachePath(rel string) string {
	return filepath.Join(cacheDir(), strings.ReplaceAll(rel, "/", "_")+".json")
}

// Lookup returns the cached profile of a release, or the default.
func Lookup(rel string) Profile {
	data, err := os.ReadFile(cachePath(rel))
	if err != nil {
		return Default(rel)
	}
	var p Profile
	if json.Unmarshal(data, &p) != nil || p.RSS <= 0 || p.CPU < 0 {
		return Default(rel)
	}
	return p
}

// Save caches a measured profile (the first measurement wins: the cache is
// "measured once"; delete the file to measure again).
func Save(p Profile) error {
	path := cachePath(p.Release)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Machine is what this box offers.
type Machine struct {
	Cores    int
	MemAvail int64 // MemAvailable of /proc/meminfo
}

// ThisMachine reads the cores and available memory.
func ThisMachine() (Machine, error) {
	m := Machine{Cores: runtime.NumCPU()}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return m, fmt.Errorf("read memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err != nil {
				return m, fmt.Errorf("read memory: %w", err)
			}
			m.MemAvail = kb << 10
		}
	}
	if m.MemAvail == 0 {
		return m, fmt.Errorf("read memory: no MemAvailable in /proc/meminfo")
	}
	return m, nil
}

// Estimate is what a testnet needs.
type Estimate struct {
	Nodes, Links int
	Runner       string
	CPU          float64 // cores at the rate below
	RSS          int64   // bytes
	Nominal      float64 // blocks/s the consensus timeouts allow (gossip: the publish rate)
	Rate         float64 // what the machine can sustain (<= Nominal)
	Unit         string  // of the rates: "blocks/s" or "msg/s"
	Sources      []string
	// per-node sums the rate is solved from: cores = fixed + perRate*rate
	fixed, perRate float64
	// share of the machine's cores the nodes may use (the rest is the
	// harness's); minRate: the slowest sustainable rate that is started.
	share, minRate float64
}

// A model is a node kind's cost on this machine.
type model func(p *plan.Testnet, runner string) Estimate

// models holds one cost model per node kind.
var models = map[string]model{
	manifest.KindCometBFT:  needConsensus,
	manifest.KindGossipsub: needGossip,
}

// DefaultMaxPEXPeers is CometBFT's max_num_outbound_peers, the peers a node
// of the seeds topology ends up with when the testnet is large.
const DefaultMaxPEXPeers = 10

// Need estimates what p needs under runner ("" = local) with its kind's
// model; the rate is solved for a machine by Fit (Check calls it).
func Need(p *plan.Testnet, runner string) Estimate {
	return models[p.NodeKind()](p, runner)
}

// needConsensus is CometBFT's model: the block rate the machine sustains.
func needConsensus(p *plan.Testnet, runner string) Estimate {
	e := Estimate{Nodes: len(p.Nodes), Runner: runner, Unit: "blocks/s", share: 1, minRate: MinRate}
	seen := map[string]bool{}
	// A link is a pair of nodes, whichever of them dials: a node's peers
	// are its degree in that undirected graph.
	pairs := map[[2]string]bool{}
	degree := map[string]int{}
	validators := 0
	for _, n := range p.Nodes {
		if n.Role == "validator" {
			validators++
		}
		for _, q := range n.PersistentPeers {
			k := [2]string{min(n.Name, q), max(n.Name, q)}
			if !pairs[k] {
				pairs[k] = true
				degree[n.Name]++
				degree[q]++
			}
		}
	}
	pexLinks := 0
	e.Nominal = 0
	for _, n := range p.Nodes {
		peers := degree[n.Name]
		if peers == 0 && len(n.Seeds) > 0 {
			peers = min(len(p.Nodes)-1, DefaultMaxPEXPeers)
			pexLinks += peers
		}
		prof := Lookup(n.Release.String())
		if !seen[prof.Release] {
			seen[prof.Release] = true
			src := "default"
			if !prof.Measured.IsZero() {
				src = fmt.Sprintf("measured %s on %d nodes", prof.Measured.Format(time.DateOnly), prof.Nodes)
			}
			e.Sources = append(e.Sources, fmt.Sprintf("%s: %.3f cores, %d MiB per idle quickstart node (%s)", prof.Release, prof.CPU, prof.RSS>>20, src))
		}
		speed := min(max(prof.CPU/quickstartCPU, 0.25), 8)
		e.fixed += speed * (CPUFixed + float64(peers)*CPUPerPeer)
		e.perRate += speed * (CPUPerHeight + float64(validators)*CPUPerVote)
		e.RSS += max(prof.RSS+int64((float64(peers)-prof.Peers)*RSSPerPeer), prof.RSS/2) + runnerRSS(runner)
		if r := nominalRate(n); e.Nominal == 0 || r < e.Nominal {
			e.Nominal = r
		}
	}
	e.Links = len(pairs) + pexLinks/2
	e.Rate = e.Nominal
	e.CPU = e.fixed + e.perRate*e.Rate
	return e
}

// nominalRate is the block rate a node's timeouts allow when CPU is not
// short: a height takes about timeout_commit plus 0.2 s of rounds.
func nominalRate(n *plan.Node) float64 {
	commit := time.Second // CometBFT's default
	if v, ok := n.Config["consensus.timeout_commit"]; ok {
		if d, err := time.ParseDuration(fmt.Sprint(v)); err == nil {
			commit = d
		}
	}
	return 1 / (commit.Seconds() + 0.2)
}

// Fit solves the block rate the machine sustains: the nominal one when
// its cores suffice, else what the cores left after the fixed costs buy.
func (e Estimate) Fit(m Machine) Estimate {
	cores := float64(m.Cores) * e.share
	e.Rate = e.Nominal
	if e.fixed+e.perRate*e.Nominal > cores && e.perRate > 0 {
		e.Rate = max(0, (cores-e.fixed)/e.perRate)
	}
	e.CPU = e.fixed + e.perRate*e.Rate
	return e
}

// Headroom: a testnet is refused when it needs more than this share of the
// available memory.
const Headroom = 0.5

// Check returns an error with the numbers when e does not fit on m: the
// chain it could sustain is slower than MinRate, or it needs too much
// memory.
func Check(e Estimate, m Machine) error {
	f := e.Fit(m)
	memCap := int64(float64(m.MemAvail) * Headroom)
	var why []string
	if f.Rate < f.minRate {
		on := fmt.Sprintf("%d cores", m.Cores)
		if f.share < 1 {
			on = fmt.Sprintf("%.0f%% of %s (the rest is the harness's)", f.share*100, on)
		}
		why = append(why, fmt.Sprintf("%.2f cores for the fixed costs and %.4f core-seconds per unit of rate: %.3f %s on %s < %.3g",
			f.fixed, f.perRate, f.Rate, f.Unit, on, f.minRate))
	}
	if e.RSS > memCap {
		why = append(why, fmt.Sprintf("memory %d MiB > %d MiB (%.0f%% of %d MiB available)", e.RSS>>20, memCap>>20, Headroom*100, m.MemAvail>>20))
	}
	if len(why) == 0 {
		return nil
	}
	advice := "a sparser topology (topology = \"seeds\" or \"random\"), a container runner on more machines"
	if e.Unit == "msg/s" {
		advice = "a lower publish rate (publish.rate, --rate)"
	}
	return fmt.Errorf("testnet does not fit on this machine: %d nodes, %d links need %s (%s); use fewer nodes, %s, or --force",
		e.Nodes, e.Links, strings.Join(why, " and "), strings.Join(e.Sources, "; "), advice)
}

// String is the one-line estimate printed before up (after Fit: with the
// block rate this machine sustains).
func (e Estimate) String() string {
	s := fmt.Sprintf("%d nodes, %d links: about %.2f cores and %d MiB, %.2f %s", e.Nodes, e.Links, e.CPU, e.RSS>>20, e.Rate, e.Unit)
	if e.Rate < e.Nominal*0.99 {
		s += fmt.Sprintf(" (%s %.2f; CPU-bound here)", map[bool]string{true: "timeouts allow", false: "publish rate"}[e.Unit == "blocks/s"], e.Nominal)
	}
	return s
}

// ReadyTimeout scales the ready timeout with the testnet: base for up to 4
// nodes, plus 2 s per further node, 1 s per 10 links (handshakes), the
// runner's declared start allowance per node (a swarm task's scheduling),
// and two heights at the rate the machine sustains (ready is height 2).
func ReadyTimeout(base time.Duration, e Estimate) time.Duration {
	d := base + time.Duration(max(0, e.Nodes-4))*2*time.Second + time.Duration(e.Links/10)*time.Second
	if r, _ := caps.Of(e.Runner); r.StartPerNode > 0 {
		d += time.Duration(float64(e.Nodes) * r.StartPerNode * float64(time.Second))
	}
	if e.Rate > 0 && e.Rate < 0.5 {
		d += time.Duration(2 / e.Rate * float64(time.Second))
	}
	return d.Round(time.Second)
}

// Measure samples the idle cost of a running testnet's nodes (all of one
// release): CPU over window, RSS at the end, averaged per node.
func Measure(rel string, pids []int, peers float64, window time.Duration) (Profile, error) {
	if len(pids) == 0 {
		return Profile{}, fmt.Errorf("measure %s: no node processes", rel)
	}
	cpu0 := map[int]float64{}
	for _, pid := range pids {
		p, err := collect.ReadProc(pid)
		if err != nil {
			return Profile{}, fmt.Errorf("measure %s: %w", rel, err)
		}
		cpu0[pid] = p.CPUSeconds
	}
	time.Sleep(window)
	var cpu float64
	var rss int64
	for _, pid := range pids {
		p, err := collect.ReadProc(pid)
		if err != nil {
			return Profile{}, fmt.Errorf("measure %s: %w", rel, err)
		}
		cpu += p.CPUSeconds - cpu0[pid]
		rss += p.RSSBytes
	}
	n := float64(len(pids))
	return Profile{Release: rel, CPU: cpu / window.Seconds() / n, RSS: rss / int64(len(pids)), Peers: peers, Nodes: len(pids), Measured: time.Now().UTC()}, nil
}

// Large is the node count from which a testnet gets the large defaults.
const Large = 32

// LargeDefaults gives a testnet of Large nodes or more what keeps it
// alive on few cores, for every value the manifest does not set itself: a
// sparse topology instead of the full mesh (random, or seeds when there are
// seed nodes) and slower consensus (timeout_propose 10s, timeout_commit
// 2s). It returns one line per change, to be stated before up.
func LargeDefaults(m *manifest.Manifest) []string {
	nodes, seeds := 0, 0
	for _, g := range m.Node {
		nodes += g.Count
		if g.Role == "seed" {
			seeds += g.Count
		}
	}
	if nodes < Large || m.Kind() != manifest.KindCometBFT {
		// Gossip hosts have no consensus timeouts, and their topology is
		// the experiment (Whiteblock's series 11 is a full mesh).
		return nil
	}
	var notes []string
	if m.Network.Topology == "full" && !m.Has("network.topology") {
		m.Network.Topology = "random"
		if seeds > 0 {
			m.Network.Topology = "seeds"
		}
		notes = append(notes, fmt.Sprintf("network.topology = %q (not a full mesh: %d nodes)", m.Network.Topology, nodes))
	}
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		for key, v := range map[string]string{"consensus.timeout_propose": "10s", "consensus.timeout_commit": "2s"} {
			if _, ok := g.Config[key]; ok {
				continue
			}
			if g.Config == nil {
				g.Config = map[string]any{}
			}
			g.Config[key] = v
			notes = append(notes, fmt.Sprintf("node.%s.config.%q = %q", name, key, v))
		}
	}
	sort.Strings(notes)
	return notes
}

// The gossipsub host's model, fitted on this machine to 95 hosts (seed 42,
// 1000 B messages; issue 12): Barabási–Albert m = 2, 6, 12 at 10 msg/s
// (0.57, 0.89, 0.92 % of a core per host) and the full mesh at 5 msg/s
// (1.16 %). A host costs a fixed part, a part per connection (heartbeats,
// IHAVE), and a part per message and mesh link, the mesh being at most
// Dhi links whatever the degree.
const (
	GossipCPUFixed   = 0.0041    // cores per host
	GossipCPUPerPeer = 0.000058  // cores per host per connection
	GossipCPUPerLink = 0.0000342 // core-seconds per message per mesh link
	GossipDhi        = 12        // go-libp2p-pubsub's default Dhi
	// GossipShare of the cores may go to the hosts: the harness (publisher,
	// collector, and the link emulator when links are impaired) needs the
	// rest, or the publish lag invalidates the run.
	GossipShare = 0.75
)

// needGossip is the gossipsub host's model: the publish rate (messages/s
// over the network) the machine sustains against the manifest's.
func needGossip(p *plan.Testnet, runner string) Estimate {
	e := Estimate{Nodes: len(p.Nodes), Runner: runner, Unit: "msg/s", share: GossipShare}
	pairs := map[[2]string]bool{}
	degree := map[string]int{}
	for _, n := range p.Nodes {
		for _, q := range n.PersistentPeers {
			k := [2]string{min(n.Name, q), max(n.Name, q)}
			if !pairs[k] {
				pairs[k] = true
				degree[n.Name]++
				degree[q]++
			}
		}
	}
	prof := Lookup(plan.GossipRelease.String())
	e.Sources = append(e.Sources, fmt.Sprintf("%s: %d MiB per host (%s)", prof.Release, prof.RSS>>20, map[bool]string{true: "default", false: "measured"}[prof.Measured.IsZero()]))
	for _, n := range p.Nodes {
		peers := degree[n.Name]
		e.fixed += GossipCPUFixed + float64(peers)*GossipCPUPerPeer
		e.perRate += float64(min(peers, GossipDhi)) * GossipCPUPerLink
		e.RSS += prof.RSS + runnerRSS(runner)
	}
	e.Links = len(pairs)
	if p.Publish != nil {
		e.Nominal = p.Publish.Rate
	}
	e.minRate = e.Nominal
	e.Rate = e.Nominal
	e.CPU = e.fixed + e.perRate*e.Rate
	return e
}
