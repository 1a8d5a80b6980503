// Package topology builds the peer graphs of a testnet: full, line, ring,
// random-regular and Barabási–Albert, each a pure function of (spec, n,
// seed), so a manifest and its seed give the same graph on every machine.
//
// Graphs are undirected, returned as edges {i, j} with i < j, sorted.
// Random kinds draw from math/rand/v2's PCG, whose output the Go project
// specifies, so golden edges stay valid across Go releases.
package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Kinds of topology.
const (
	Full           = "full"
	Line           = "line"
	Ring           = "ring"
	RandomRegular  = "random-regular"
	BarabasiAlbert = "barabasi-albert"
)

// Kinds lists every kind Edges accepts.
var Kinds = []string{Full, Line, Ring, RandomRegular, BarabasiAlbert}

// Spec names a topology and its parameters: M for barabasi-albert (edges of
// each new node), Degree for random-regular.
type Spec struct {
	Kind   string
	M      int
	Degree int
}

// rngStream separates topology draws from other users of the same seed.
const rngStream = 0x746f706f6c6f6779 // "topology"

// maxRegularTries bounds the restarts of the random-regular generator; at
// n <= a few thousand and d << n a try almost never fails.
const maxRegularTries = 1000

// Check reports whether s can build a graph of n nodes, with the message a
// manifest error shows (without the field name).
func Check(s Spec, n int) error {
	if n < 1 {
		return fmt.Errorf("%d nodes: want at least 1", n)
	}
	switch s.Kind {
	case Full, Line, Ring:
	case BarabasiAlbert:
		if s.M < 1 || s.M >= n {
			return fmt.Errorf("m = %d: want 1 <= m < nodes (%d)", s.M, n)
		}
	case RandomRegular:
		switch {
		case n < 3:
			return fmt.Errorf("%d nodes: random-regular needs at least 3", n)
		case s.Degree < 2 || s.Degree >= n:
			return fmt.Errorf("degree = %d: want 2 <= degree < nodes (%d)", s.Degree, n)
		case n*s.Degree%2 != 0:
			return fmt.Errorf("degree = %d with %d nodes: nodes x degree must be even (every link has two ends)", s.Degree, n)
		}
	default:
		return fmt.Errorf("kind %q: want one of %v", s.Kind, Kinds)
	}
	return nil
}

// Edges returns the undirected edges of the topology over nodes 0..n-1,
// each {i, j} with i < j, sorted. Every graph it returns is connected.
//
// Edge counts: full n(n-1)/2; line n-1; ring n (n >= 3); random-regular
// n·d/2; barabasi-albert m(n-m) (a star of m+1 nodes to start, as NetworkX's
// barabasi_albert_graph: m edges, then m per each of the n-m-1 later nodes;
// the star's leaves may keep fewer than m links, every later node has m+).
func Edges(s Spec, n int, seed uint64) ([][2]int, error) {
	if err := Check(s, n); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, rngStream))
	var e [][2]int
	switch s.Kind {
	case Full:
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				e = append(e, [2]int{i, j})
			}
		}
	case Line, Ring:
		for i := 0; i+1 < n; i++ {
			e = append(e, [2]int{i, i + 1})
		}
		if s.Kind == Ring && n >= 3 {
			e = append(e, [2]int{0, n - 1})
		}
	case BarabasiAlbert:
		e = barabasiAlbert(n, s.M, rng)
	case RandomRegular:
		var err error
		if e, err = randomRegular(n, s.Degree, rng); err != nil {
			return nil, err
		}
	}
	return sorted(e), nil
}

func sorted(e [][2]int) [][2]int {
	for k, p := range e {
		if p[0] > p[1] {
			e[k] = [2]int{p[1], p[0]}
		}
	}
	slices.SortFunc(e, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return e
}

// barabasiAlbert is NetworkX's algorithm (its random stream differs, so
// the graph for seed 42 is not Whiteblock's own; the distribution is):
// start from a star on nodes 0..m, then each new node links to m distinct
// existing nodes drawn with probability proportional to their degree, by
// drawing uniformly from a list holding every node once per link end.
func barabasiAlbert(n, m int, rng *rand.Rand) [][2]int {
	var e [][2]int
	var ends []int // every node once per edge end
	for i := 1; i <= m; i++ {
		e = append(e, [2]int{0, i})
		ends = append(ends, 0, i)
	}
	chosen := make(map[int]bool, m)
	targets := make([]int, 0, m)
	for src := m + 1; src < n; src++ {
		clear(chosen)
		targets = targets[:0]
		for len(targets) < m {
			t := ends[rng.IntN(len(ends))]
			if !chosen[t] {
				chosen[t] = true
				targets = append(targets, t)
			}
		}
		for _, t := range targets {
			e = append(e, [2]int{t, src})
			ends = append(ends, t, src)
		}
	}
	return e
}

// randomRegular draws a connected d-regular graph uniformly enough for
// testing (NetworkX's random_regular_graph, after Steger and Wormald): pair
// shuffled link ends, keep the pairs that make new simple edges, re-pair the
// rest; restart when the rest cannot pair or the graph is disconnected.
func randomRegular(n, d int, rng *rand.Rand) ([][2]int, error) {
	for try := 0; try < maxRegularTries; try++ {
		e := tryRegular(n, d, rng)
		if e != nil && connected(n, e) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("random-regular n=%d degree=%d: no connected graph in %d tries", n, d, maxRegularTries)
}

func tryRegular(n, d int, rng *rand.Rand) [][2]int {
	have := map[[2]int]bool{}
	var e [][2]int
	stubs := make([]int, 0, n*d)
	for i := 0; i < d; i++ {
		for v := 0; v < n; v++ {
			stubs = append(stubs, v)
		}
	}
	for round := 0; len(stubs) > 0; round++ {
		if round == maxRegularTries {
			return nil
		}
		rng.Shuffle(len(stubs), func(i, j int) { stubs[i], stubs[j] = stubs[j], stubs[i] })
		var rest []int
		for k := 0; k+1 < len(stubs); k += 2 {
			a, b := min(stubs[k], stubs[k+1]), max(stubs[k], stubs[k+1])
			if a != b && !have[[2]int{a, b}] {
				have[[2]int{a, b}] = true
				e = append(e, [2]int{a, b})
			} else {
				rest = append(rest, a, b)
			}
		}
		if !canPair(rest, have) {
			return nil
		}
		stubs = rest
	}
	return e
}

// canPair reports whether some two remaining ends could still form a new edge.
func canPair(rest []int, have map[[2]int]bool) bool {
	if len(rest) == 0 {
		return true
	}
	for i := range rest {
		for j := i + 1; j < len(rest); j++ {
			a, b := min(rest[i], rest[j]), max(rest[i], rest[j])
			if a != b && !have[[2]int{a, b}] {
				return true
			}
		}
	}
	return false
}

// Adjacency returns each node's neighbours, sorted.
func Adjacency(n int, edges [][2]int) [][]int {
	adj := make([][]int, n)
	for _, p := range edges {
		adj[p[0]] = append(adj[p[0]], p[1])
		adj[p[1]] = append(adj[p[1]], p[0])
	}
	for _, a := range adj {
		slices.Sort(a)
	}
	return adj
}

// connected reports whether the graph over n nodes is one component.
func connected(n int, edges [][2]int) bool {
	if n <= 1 {
		return true
	}
	adj := Adjacency(n, edges)
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !seen[w] {
				seen[w] = true
				count++
				stack = append(stack, w)
			}
		}
	}
	return count == n
}
