package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Machines is what a testnet needs of a cluster of machines of one size
// (a swarm's nodes): how many, so that every node gets its share of cores
// at the nominal rate and memory within Headroom, in all and per zone when
// zones place the nodes (a zone's machines host only its nodes).
type Machines struct {
	Size    Machine
	Total   int
	ByZone  map[string]int // zone -> machines; empty without zones
	CPU     float64        // cores the testnet needs at its nominal rate
	RSS     int64
	PerNode struct {
		CPU float64
		RSS int64
	}
}

// NeedMachines sizes a cluster for e (Need's estimate, not yet Fit: the
// nominal rate) on machines of size; zones maps zone -> its node count
// (nil: no placement by zone).
func NeedMachines(e Estimate, size Machine, zones map[string]int) (Machines, error) {
	if size.Cores <= 0 || size.MemAvail <= 0 {
		return Machines{}, fmt.Errorf("machine size %+v: want cores and memory above 0", size)
	}
	m := Machines{Size: size, ByZone: map[string]int{}}
	m.CPU = e.Fixed + e.PerRate*e.Nominal
	m.RSS = e.RSS
	if e.Nodes > 0 {
		m.PerNode.CPU = m.CPU / float64(e.Nodes)
		m.PerNode.RSS = m.RSS / int64(e.Nodes)
	}
	count := func(nodes int) int {
		cpu := m.PerNode.CPU * float64(nodes) / (float64(size.Cores) * e.Share)
		mem := float64(m.PerNode.RSS) * float64(nodes) / (float64(size.MemAvail) * Headroom)
		return max(1, int(math.Ceil(max(cpu, mem)-1e-9)))
	}
	if len(zones) == 0 {
		m.Total = count(e.Nodes)
		return m, nil
	}
	for z, n := range zones {
		m.ByZone[z] = count(n)
		m.Total += m.ByZone[z]
	}
	return m, nil
}

// Cluster is a cluster of machines as one: the sum of their
// cores and memory (each machine's share of the nodes is the scheduler's).
func Cluster(ms []Machine) Machine {
	var c Machine
	for _, m := range ms {
		c.Cores += m.Cores
		c.MemAvail += m.MemAvail
	}
	return c
}

// ParseSize reads a machine size "8c/32g" (cores / memory in g or m).
func ParseSize(s string) (Machine, error) {
	c, mem, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "/")
	bad := fmt.Errorf("machine size %q: want <cores>c/<memory>g, e.g. 8c/32g", s)
	if !ok {
		return Machine{}, bad
	}
	cores, err := strconv.Atoi(strings.TrimSuffix(c, "c"))
	if err != nil || cores <= 0 {
		return Machine{}, bad
	}
	mult := int64(1 << 30)
	switch {
	case strings.HasSuffix(mem, "g"):
		mem = strings.TrimSuffix(mem, "g")
	case strings.HasSuffix(mem, "m"):
		mem, mult = strings.TrimSuffix(mem, "m"), 1<<20
	default:
		return Machine{}, bad
	}
	v, err := strconv.ParseFloat(mem, 64)
	if err != nil || v <= 0 {
		return Machine{}, bad
	}
	return Machine{Cores: cores, MemAvail: int64(v * float64(mult))}, nil
}

// String states the sizing.
func (m Machines) String() string {
	s := fmt.Sprintf("%d machines of %d cores and %d GiB (%.2f cores and %d MiB per node at the nominal rate; %.1f cores and %d GiB in all)",
		m.Total, m.Size.Cores, m.Size.MemAvail>>30, m.PerNode.CPU, m.PerNode.RSS>>20, m.CPU, m.RSS>>30)
	if len(m.ByZone) > 0 {
		var zs []string
		for _, z := range sortedZones(m.ByZone) {
			zs = append(zs, fmt.Sprintf("%s %d", z, m.ByZone[z]))
		}
		s += "; by zone: " + strings.Join(zs, ", ")
	}
	return s
}

func sortedZones(m map[string]int) []string {
	var zs []string
	for z := range m {
		zs = append(zs, z)
	}
	for i := 1; i < len(zs); i++ {
		for j := i; j > 0 && zs[j] < zs[j-1]; j-- {
			zs[j], zs[j-1] = zs[j-1], zs[j]
		}
	}
	return zs
}
