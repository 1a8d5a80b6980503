package local

import "github.com/benchnet/benchnet/internal/osched"

// NodeNice is the nice value of every process the runner starts: the nodes
// under test yield to the harness (load pacing, collectors, link emulator),
// so at saturation, where they share the CPUs, the harness keeps its schedule
// and the nodes, not the measurement, absorb the shortage. Nice 5 weighs 335
// against the harness's 1024 (CFS/EEVDF weights); between nodes nothing
// changes.
const NodeNice = 5

// deprioritize lowers the CPU priority of the process group a child leads,
// right after its start: it is still `ip netns exec` or an early
// single-threaded exec, and every thread it creates later inherits the
// value. Best effort: a node at normal priority still runs, only the
// harness's margin shrinks.
func deprioritize(pgid int) { _ = osched.NiceGroup(pgid, NodeNice) }
