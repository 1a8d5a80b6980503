// Package caps holds what each runner declares about itself: its
// capabilities record. Runners declare their record when they register
// (infra.Register); the layers above (manifest validation, the capacity
// model, the testnet) ask the record instead of naming runners. It is a
// leaf package so that the manifest, which every runner depends on, can
// read the records without importing a runner.
package caps

import (
	"sort"
	"sync"
)

// Record is one runner's capabilities. The zero Record is the most
// conservative: nothing beyond one node process per host.
type Record struct {
	// ConcurrentStarts is how many nodes Up may start at once (0 or 1:
	// one after another). A runner whose Start waits on a remote engine
	// (a swarm task's scheduling, image and volume) gains most from it.
	ConcurrentStarts int
	// Links are the link-emulation backends (linkem kinds: "netem",
	// "userspace") the runner can wire between its hosts; none: the
	// runner cannot emulate links (zones, delay, jitter, loss, bandwidth).
	Links []string
	// AutoLinks is the link-emulation backend "auto" means under the
	// runner ("" = detect what the machine offers); AutoLinksWhy says why.
	AutoLinks, AutoLinksWhy string
	// Engine: the runner needs a Docker engine that answers.
	Engine bool
	// Engines: the runner drives the engines of several machines
	// ([infra] engines).
	Engines bool
	// Limits: the runner enforces [infra] cpus and memory per node.
	Limits bool
	// Sidecars: a second process may share a node's host (network
	// namespace), as app = "kvstore-socket" needs.
	Sidecars bool
	// PeersByName: peers dial a node by its name (a swarm service's DNS
	// alias on the overlay): the runner cannot give a node the plan's
	// address. The plan resolves every node's host to its name, so it
	// never changes after resolution.
	PeersByName bool
	// GossipHosts: the runner can host our gossipsub node, which listens
	// on the address it is given (a swarm service's virtual IP is not one).
	GossipHosts bool
	// DynamicBinaries: the runner can exec a binary that needs the
	// machine's dynamic loader (containers built FROM scratch cannot).
	DynamicBinaries bool
	// NodeOverheadRSS is memory per node outside the node's process (a
	// container's shim, a task's port proxies), for the capacity model.
	NodeOverheadRSS int64
	// Placement is the machine label a manifest zone places nodes by, for
	// a runner whose nodes run on several machines ("": zones are emulated
	// links between hosts on this machine).
	Placement string
	// StartPerNode is the ready-time allowance per node beyond the node's
	// own start (a swarm task's scheduling), in seconds.
	StartPerNode float64
	// TestnetS is what one testnet's up and down cost on this runner
	// beyond what the nodes' own start and stop take on this machine
	// (services created, images and homes delivered, tasks scheduled and
	// removed), in seconds: measured, for the plans of experiments that
	// bring many testnets up (a QA brings up one per run).
	TestnetS float64
}

// CanLink reports whether the runner wires the link-emulation backend kind.
func (r Record) CanLink(kind string) bool {
	for _, k := range r.Links {
		if k == kind {
			return true
		}
	}
	return false
}

var (
	mu      sync.Mutex
	records = map[string]Record{}
)

// Declare records a runner's capabilities (infra.Register calls it).
func Declare(name string, r Record) {
	mu.Lock()
	defer mu.Unlock()
	records[name] = r
}

// Of returns the record the runner called name declared; ok is false when
// no runner of that name is built into this binary.
func Of(name string) (r Record, ok bool) {
	mu.Lock()
	defer mu.Unlock()
	r, ok = records[name]
	return r, ok
}

// Names lists the runners that declared a record, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(records))
	for n := range records {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Where lists the declared runners for which has is true, sorted: "link
// emulation needs runner local or docker".
func Where(has func(Record) bool) []string {
	var out []string
	for _, n := range Names() {
		if r, _ := Of(n); has(r) {
			out = append(out, n)
		}
	}
	return out
}
