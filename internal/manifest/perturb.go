package manifest

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Perturb is one [[perturb]] entry: at a time into the load, do something to
// some nodes; with For, undo it that much later.
type Perturb struct {
	// At is the time into the load (after the warm-up).
	At rundir.Duration `toml:"at" json:"at"`
	// Node or Nodes name the targets: a node ("validator2"), a group
	// ("validator": every node of it) or "random:<group>" (one node of the
	// group, drawn from the manifest's seed).
	Node  string   `toml:"node" json:"node,omitempty"`
	Nodes []string `toml:"nodes" json:"nodes,omitempty"`
	// Action is one of PerturbActions.
	Action string `toml:"action" json:"action"`
	// For undoes the action after this long: a kill is followed by a
	// restart, a pause by a resume, a disconnect or partition by a heal; for
	// restart and wipe-restart it is how long the node stays down.
	For rundir.Duration `toml:"for" json:"for"`
}

// Perturbation actions.
const (
	ActKill        = "kill"         // SIGKILL the node (a crash)
	ActRestart     = "restart"      // SIGTERM, then start again with the same home
	ActPause       = "pause"        // SIGSTOP the node's process group
	ActResume      = "resume"       // SIGCONT
	ActDisconnect  = "disconnect"   // cut every link of each target to every other node
	ActPartition   = "partition"    // cut the targets (one side) from the rest
	ActHeal        = "heal"         // remove every cut
	ActWipeRestart = "wipe-restart" // stop, reset the home to genesis, start: block sync from scratch
)

// PerturbActions lists the valid actions.
var PerturbActions = []string{ActKill, ActRestart, ActPause, ActResume, ActDisconnect, ActPartition, ActHeal, ActWipeRestart}

// LinkAction says whether an action changes links (needs link emulation).
func LinkAction(a string) bool { return a == ActDisconnect || a == ActPartition || a == ActHeal }

// Rotate is the [rotate] table: ephemeral full nodes that join during the
// load, block-sync to the tip, stay a while, then are stopped and wiped, as
// in the CometBFT QA's rotating-node test.
type Rotate struct {
	// Group is a group of full nodes; they are not started by `up`.
	Group string `toml:"group" json:"group"`
	// AtATime is how many of them run at once (default 1, at most the
	// group's count): slot i uses node i of the group.
	AtATime int `toml:"at_a_time" json:"at_a_time"`
	// Cycles is how many start-catch-up-stop-wipe cycles run in total.
	Cycles int `toml:"cycles" json:"cycles"`
	// Keep is how long a node stays once at the tip.
	Keep rundir.Duration `toml:"keep" json:"keep"`
	// Start is when the first cycle starts, as time into the load.
	Start rundir.Duration `toml:"start" json:"start"`
	// CatchUpTimeout bounds one catch-up (default 5m).
	CatchUpTimeout rundir.Duration `toml:"catchup_timeout" json:"catchup_timeout"`
}

// DefaultHaltLimit is how long the chain may go without a block, once there
// are perturbations or rotating nodes, before the run ends as failed.
const DefaultHaltLimit = 60 * time.Second

// DefaultCatchUpTimeout bounds one catch-up of a rotating node.
const DefaultCatchUpTimeout = 5 * time.Minute

// Faulty says whether the manifest perturbs nodes or rotates them.
func (m *Manifest) Faulty() bool { return len(m.Perturb) > 0 || m.Rotate != nil }

func (m *Manifest) faultDefaults() {
	// halt_limit is how long a chain may go without a block: a kind with
	// no chain (gossipsub) gets no default (and validation refuses one).
	if m.HaltLimit.Duration == 0 && m.Faulty() && !m.Schema().NoChain {
		m.HaltLimit.Duration = DefaultHaltLimit
	}
	if r := m.Rotate; r != nil {
		if r.AtATime == 0 {
			r.AtATime = 1
		}
		if r.CatchUpTimeout.Duration == 0 {
			r.CatchUpTimeout.Duration = DefaultCatchUpTimeout
		}
	}
}

// scanPerturbPositions returns, for each [[perturb]] header in the file, the
// lines of its keys (and of the header itself, under "").
func scanPerturbPositions(data []byte) []positions {
	var out []positions
	var cur positions
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			cur = nil
			if strings.HasPrefix(line, "[[") {
				inner := strings.TrimPrefix(line, "[[")
				if end := strings.Index(inner, "]]"); end >= 0 && joinKey(splitKey(inner[:end])) == "perturb" {
					cur = positions{"": n}
					out = append(out, cur)
				}
			}
			continue
		}
		if key, ok := leadingKey(line); ok && cur != nil {
			if _, seen := cur[key]; !seen {
				cur[key] = n
			}
		}
	}
	return out
}

// perturbErrorf builds a FieldError at key of the i-th [[perturb]] entry.
func (m *Manifest) perturbErrorf(i int, key, format string, args ...any) *FieldError {
	line := 0
	if i < len(m.perturbPos) {
		if l, ok := m.perturbPos[i][key]; ok {
			line = l
		} else {
			line = m.perturbPos[i][""]
		}
	}
	if line == 0 {
		line = max(m.pos.line("perturb"), 1)
	}
	field := fmt.Sprintf("perturb[%d]", i)
	if key != "" {
		field += "." + key
	}
	return &FieldError{File: m.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// nodeNames returns the node names of a group as the plan names them.
func (m *Manifest) groupNodes(group string) []string {
	g := m.Node[group]
	if g == nil {
		return nil
	}
	names := make([]string, 0, g.Count)
	for i := range min(g.Count, MaxNodes) {
		names = append(names, group+strconv.Itoa(i))
	}
	return names
}

// validateFaults checks halt_limit, every [[perturb]] entry and [rotate].
func (m *Manifest) validateFaults() Errors {
	var errs Errors
	if m.HaltLimit.Duration < 0 || m.HaltLimit.Duration > MaxWait {
		errs = append(errs, m.Errorf("halt_limit", "%s: want 0 to %s", m.HaltLimit.Duration, MaxWait))
	}
	// A kind without a chain (a gossipsub host) keeps no chain state:
	// there is no genesis to wipe it back to and no tip to block-sync to
	// (its driver refuses Reset).
	kind := m.Kind()
	noChain := m.Schema().NoChain
	if noChain && m.HaltLimit.Duration != 0 {
		errs = append(errs, m.Errorf("halt_limit", "halt_limit ends a run whose chain stops making blocks: a %s testnet has no chain (kind = %q)", kind, kind))
	}
	rotating := map[string]bool{}
	switch {
	case m.Rotate != nil && noChain:
		errs = append(errs, m.Errorf("rotate", "[rotate] cycles full nodes that block-sync to the tip: a %s testnet has no chain (kind = %q)", kind, kind))
	case m.Rotate != nil:
		rotating = m.validateRotate(&errs)
	}
	linkemOK := m.Network.Linkem == "netem" || m.Network.Linkem == "userspace"
	for i, p := range m.Perturb {
		add := func(key, format string, args ...any) {
			errs = append(errs, m.perturbErrorf(i, key, format, args...))
		}
		if p == nil {
			continue
		}
		if p.At.Duration < 0 || p.At.Duration > MaxDuration {
			add("at", "%s: want 0 to %s into the load", p.At.Duration, MaxDuration)
		}
		if p.For.Duration < 0 || p.For.Duration > MaxDuration {
			add("for", "%s: want 0 to %s", p.For.Duration, MaxDuration)
		}
		if !slices.Contains(PerturbActions, p.Action) {
			add("action", "%q: want one of %s", p.Action, strings.Join(PerturbActions, ", "))
			continue
		}
		if (p.Action == ActResume || p.Action == ActHeal) && p.For.Duration > 0 {
			add("for", "%s is itself an undo; it takes no \"for\"", p.Action)
		}
		// The gossip scenario runs every other action during its publish
		// window, as the steady run does during its load.
		if p.Action == ActWipeRestart && noChain {
			add("action", "wipe-restart resets a node's chain state to genesis: a %s host keeps none (kind = %q)", kind, kind)
		}
		switch rc, _ := caps.Of(m.Infra.Runner); {
		case !LinkAction(p.Action):
		case m.Network.Linkem == "agent" || (len(rc.Links) > 0 && !rc.CanLink("netem") && !rc.CanLink("userspace")):
			// The agents beside the nodes (swarm) have a control port,
			// but a push the harness skipped (a node's agent endpoint not
			// found) went unseen: cuts reached the agents in 1 of 3 swarm
			// runs (NOTES). Refused until every push is accounted for.
			add("action", "%s changes links mid-run, which the link agents of runner %q do not do reliably yet (a node whose agent the harness does not reach keeps its links): use infra.runner = %s", p.Action, m.Infra.Runner,
				orList(quoteEach(caps.Where(func(r caps.Record) bool { return r.CanLink("netem") || r.CanLink("userspace") }))))
		case !linkemOK:
			add("action", "%s changes links: set [network].linkem = \"netem\" or \"userspace\" (now %q)", p.Action, m.Network.Linkem)
		}
		targets := p.Nodes
		if p.Node != "" {
			targets = append([]string{p.Node}, targets...)
		}
		switch {
		case p.Action == ActHeal:
			if len(targets) > 0 {
				add("node", "heal removes every cut; it takes no node")
			}
			continue
		case p.Node != "" && len(p.Nodes) > 0:
			add("nodes", "give node or nodes, not both")
			continue
		case len(targets) == 0:
			add("node", "%s needs node = \"<name>\", a group or \"random:<group>\", or nodes = [...]", p.Action)
			continue
		}
		key := "node"
		if len(p.Nodes) > 0 {
			key = "nodes"
		}
		for _, t := range targets {
			names, err := m.targetNames(t, 0)
			if err != nil {
				add(key, "%v", err)
				continue
			}
			for _, n := range names {
				if rotating[n] {
					add(key, "%s belongs to the rotating group %q, which [rotate] starts and stops", n, m.Rotate.Group)
				}
			}
		}
	}
	return errs
}

// targetNames resolves one target to node names; random picks use draw.
func (m *Manifest) targetNames(t string, draw uint64) ([]string, error) {
	if g, ok := strings.CutPrefix(t, "random:"); ok {
		names := m.groupNodes(g)
		if len(names) == 0 {
			return nil, fmt.Errorf("%q: no group %q", t, g)
		}
		return []string{names[draw%uint64(len(names))]}, nil
	}
	if names := m.groupNodes(t); len(names) > 0 {
		return names, nil
	}
	for _, g := range m.GroupNames() {
		if slices.Contains(m.groupNodes(g), t) {
			return []string{t}, nil
		}
	}
	return nil, fmt.Errorf("%q is neither a node nor a group of this testnet (nodes are named <group><index>, e.g. %q)", t, firstNode(m))
}

func firstNode(m *Manifest) string {
	for _, g := range m.GroupNames() {
		if n := m.groupNodes(g); len(n) > 0 {
			return n[0]
		}
	}
	return "validator0"
}

func (m *Manifest) validateRotate(errs *Errors) map[string]bool {
	r := m.Rotate
	add := func(field, format string, args ...any) {
		*errs = append(*errs, m.Errorf("rotate."+field, format, args...))
	}
	g := m.Node[r.Group]
	rotating := map[string]bool{}
	switch {
	case r.Group == "":
		add("group", "name the group of ephemeral full nodes")
	case g == nil:
		add("group", "%q: no such [node.%s] group", r.Group, r.Group)
	case g.Role != "full":
		add("group", "%q has role %q: rotating nodes must be full nodes (a validator's absence would change the quorum)", r.Group, g.Role)
	default:
		for _, n := range m.groupNodes(r.Group) {
			rotating[n] = true
		}
		if r.AtATime < 1 || r.AtATime > g.Count {
			add("at_a_time", "%d: want 1 to the group's count (%d)", r.AtATime, g.Count)
		}
		if g.StartDelay.Duration > 0 {
			add("group", "%q has a start_delay; [rotate] starts it (use rotate.start)", r.Group)
		}
		if m.Load.Workload == WorkloadAccounts && rotating[m.Load.Target] {
			*errs = append(*errs, m.Errorf("load.target", "%q is a node of the [rotate] group %q, which no load may target (up never starts it; run starts it during the load): target a validator or another full node", m.Load.Target, r.Group))
		}
	}
	if r.Cycles < 1 || r.Cycles > 10_000 {
		add("cycles", "%d: want 1 to 10000", r.Cycles)
	}
	checkDuration(add, "keep", r.Keep.Duration, MaxDuration)
	checkDuration(add, "start", r.Start.Duration, MaxDuration)
	if r.CatchUpTimeout.Duration <= 0 || r.CatchUpTimeout.Duration > MaxWait {
		add("catchup_timeout", "%s: want more than 0, at most %s", r.CatchUpTimeout.Duration, MaxWait)
	}
	return rotating
}

// Step is one resolved perturbation: an action on concrete nodes at a time
// into the load. Undo steps (the end of a For) are steps of their own.
type Step struct {
	At     time.Duration `json:"at"`
	Action string        `json:"action"`
	Nodes  []string      `json:"nodes,omitempty"`
	// Entry is the index of the [[perturb]] entry; Undo marks the step
	// that ends its For.
	Entry int  `json:"entry"`
	Undo  bool `json:"undo,omitempty"`
	// For is the entry's For (on the first step).
	For time.Duration `json:"for,omitempty"`
}

// undoOf is the action that ends a For.
var undoOf = map[string]string{
	ActKill: ActRestart, ActPause: ActResume, ActDisconnect: ActHeal, ActPartition: ActHeal,
}

// PerturbSteps resolves the [[perturb]] entries of a validated manifest into
// steps ordered by time (ties keep file order), random picks drawn from the
// seed. A restart or wipe-restart with For is one step (the scheduler keeps
// the node down that long).
func (m *Manifest) PerturbSteps() ([]Step, error) {
	var steps []Step
	for i, p := range m.Perturb {
		if p == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(m.Seed), uint64(i)))
		targets := p.Nodes
		if p.Node != "" {
			targets = append([]string{p.Node}, targets...)
		}
		var nodes []string
		for _, t := range targets {
			names, err := m.targetNames(t, rng.Uint64())
			if err != nil {
				return nil, m.perturbErrorf(i, "node", "%v", err)
			}
			for _, n := range names {
				if !slices.Contains(nodes, n) {
					nodes = append(nodes, n)
				}
			}
		}
		steps = append(steps, Step{At: p.At.Duration, Action: p.Action, Nodes: nodes, Entry: i, For: p.For.Duration})
		if undo, ok := undoOf[p.Action]; ok && p.For.Duration > 0 {
			steps = append(steps, Step{At: p.At.Duration + p.For.Duration, Action: undo, Nodes: nodes, Entry: i, Undo: true})
		}
	}
	slices.SortStableFunc(steps, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
	return steps, nil
}
