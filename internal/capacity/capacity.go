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
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/registry"
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

// MinRate is the slowest chain (blocks/s) a testnet may be predicted to
// make on this machine and still be started: a model's default floor.
const MinRate = 0.1

// RunnerRSS is memory per node outside the node's process, as the runner
// declares it (measured with the quickstart: a container's shim, a swarm
// task's port proxies): a model adds it per node.
func RunnerRSS(runner string) int64 {
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
	Nominal      float64 // the rate the testnet asks for (blocks/s its timeouts allow, a publish rate)
	Rate         float64 // what the machine can sustain (<= Nominal)
	Unit         string  // of the rates: "blocks/s", "msg/s"
	Sources      []string
	// NominalIs names Nominal in the one-line estimate ("timeouts allow");
	// Advice is what a refusal suggests besides fewer nodes.
	NominalIs, Advice string
	// The per-node sums the rate is solved from: cores = Fixed + PerRate*rate.
	Fixed, PerRate float64
	// Share of the machine's cores the nodes may use (the rest is the
	// harness's); MinRate: the slowest sustainable rate that is started.
	Share, MinRate float64
}

// Model is a node kind's cost on this machine, registered by the kind.
type Model struct {
	// Need estimates what p needs under runner at its nominal rate.
	Need func(p *plan.Testnet, runner string) Estimate
	// LargeDefaults, when set, gives a testnet of Large nodes or more of
	// the kind (nodes in all, seeds of them) what keeps it alive on few
	// cores, changing m; it returns one line per change.
	LargeDefaults func(m *manifest.Manifest, nodes, seeds int) []string
}

var models = registry.New[Model]("capacity model for node kind")

// Register makes kind's cost model the one Need and LargeDefaults use; a
// kind registers once, from its package's init.
func Register(kind string, m Model) { models.Register(kind, m) }

// Kinds are the node kinds with a cost model in this binary.
func Kinds() []string { return models.Names() }

// Need estimates what p needs under runner ("" = local) with its kind's
// model; the rate is solved for a machine by Fit (Check calls it). A kind
// without a model in this binary gets an estimate that says so and fits.
func Need(p *plan.Testnet, runner string) Estimate {
	m, err := models.Lookup(p.NodeKind())
	if err != nil {
		return Estimate{Nodes: len(p.Nodes), Runner: runner, Share: 1, Sources: []string{err.Error() + "; import internal/kinds"}}
	}
	return m.Need(p, runner)
}

// PeerLinks counts p's links (a pair of nodes, whichever of them dials)
// and each node's peers: its degree in that undirected graph.
func PeerLinks(p *plan.Testnet) (links int, degree map[string]int) {
	pairs := map[[2]string]bool{}
	degree = map[string]int{}
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
	return len(pairs), degree
}

// Fit solves the rate the machine sustains: the nominal one when
// its cores suffice, else what the cores left after the fixed costs buy.
func (e Estimate) Fit(m Machine) Estimate {
	cores := float64(m.Cores) * e.Share
	e.Rate = e.Nominal
	if e.Fixed+e.PerRate*e.Nominal > cores && e.PerRate > 0 {
		e.Rate = max(0, (cores-e.Fixed)/e.PerRate)
	}
	e.CPU = e.Fixed + e.PerRate*e.Rate
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
	if f.Rate < f.MinRate {
		on := fmt.Sprintf("%d cores", m.Cores)
		if f.Share < 1 {
			on = fmt.Sprintf("%.0f%% of %s (the rest is the harness's)", f.Share*100, on)
		}
		why = append(why, fmt.Sprintf("%.2f cores for the fixed costs and %.4f core-seconds per unit of rate: %.3f %s on %s < %.3g",
			f.Fixed, f.PerRate, f.Rate, f.Unit, on, f.MinRate))
	}
	if e.RSS > memCap {
		why = append(why, fmt.Sprintf("memory %d MiB > %d MiB (%.0f%% of %d MiB available)", e.RSS>>20, memCap>>20, Headroom*100, m.MemAvail>>20))
	}
	if len(why) == 0 {
		return nil
	}
	advice := "use fewer nodes"
	if e.Advice != "" {
		advice += ", " + e.Advice
	}
	return fmt.Errorf("testnet does not fit on this machine: %d nodes, %d links need %s (%s); %s, or --force",
		e.Nodes, e.Links, strings.Join(why, " and "), strings.Join(e.Sources, "; "), advice)
}

// String is the one-line estimate printed before up (after Fit: with the
// rate this machine sustains).
func (e Estimate) String() string {
	s := fmt.Sprintf("%d nodes, %d links: about %.2f cores and %d MiB, %.2f %s", e.Nodes, e.Links, e.CPU, e.RSS>>20, e.Rate, e.Unit)
	if e.Rate < e.Nominal*0.99 {
		s += fmt.Sprintf(" (%s %.2f; CPU-bound here)", e.NominalIs, e.Nominal)
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

// LargeDefaults gives a testnet of Large nodes or more what its kind's
// model says keeps it alive on few cores (CometBFT: a sparse topology and
// slower consensus), for every value the manifest does not set itself. It
// returns one line per change, to be stated before up.
func LargeDefaults(m *manifest.Manifest) []string {
	nodes, seeds := 0, 0
	for _, g := range m.Node {
		nodes += g.Count
		if g.Role == "seed" {
			seeds += g.Count
		}
	}
	model, ok := models.Get(m.Kind())
	if nodes < Large || !ok || model.LargeDefaults == nil {
		return nil
	}
	return model.LargeDefaults(m, nodes, seeds)
}
