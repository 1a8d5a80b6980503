package topology

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

func degrees(n int, e [][2]int) []int {
	d := make([]int, n)
	for _, p := range e {
		d[p[0]]++
		d[p[1]]++
	}
	return d
}

// checkSimple fails on self-loops, duplicates, unsorted or out-of-range edges.
func checkSimple(t *testing.T, n int, e [][2]int) {
	t.Helper()
	for k, p := range e {
		if p[0] >= p[1] || p[0] < 0 || p[1] >= n {
			t.Fatalf("edge %d = %v: want 0 <= i < j < %d", k, p, n)
		}
		if k > 0 {
			q := e[k-1]
			if q == p {
				t.Fatalf("edge %v listed twice", p)
			}
			if q[0] > p[0] || (q[0] == p[0] && q[1] > p[1]) {
				t.Fatalf("edges not sorted at %d: %v then %v", k, q, p)
			}
		}
	}
}

func TestProperties(t *testing.T) {
	for _, tc := range []struct {
		spec      Spec
		n         int
		wantEdges int
		// wantDegree >0: every node has exactly that degree.
		wantDegree int
		minDegree  int
	}{
		{Spec{Kind: Full}, 1, 0, 0, 0},
		{Spec{Kind: Full}, 6, 15, 5, 5},
		{Spec{Kind: Line}, 2, 1, 1, 1},
		{Spec{Kind: Line}, 10, 9, 0, 1},
		{Spec{Kind: Ring}, 10, 10, 2, 2},
		{Spec{Kind: RandomRegular, Degree: 3}, 10, 15, 3, 3},
		{Spec{Kind: RandomRegular, Degree: 20}, 96, 960, 20, 20},
		{Spec{Kind: RandomRegular, Degree: 2}, 7, 7, 2, 2},
		{Spec{Kind: BarabasiAlbert, M: 1}, 2, 1, 0, 1},
		{Spec{Kind: BarabasiAlbert, M: 2}, 95, 2 * 93, 0, 2},
		{Spec{Kind: BarabasiAlbert, M: 6}, 95, 6 * 89, 0, 6},
		{Spec{Kind: BarabasiAlbert, M: 12}, 95, 12 * 83, 0, 12},
		{Spec{Kind: BarabasiAlbert, M: 16}, 95, 16 * 79, 0, 16},
	} {
		for _, seed := range []uint64{1, 42, 1 << 40} {
			name := fmt.Sprintf("%s_m%d_d%d_n%d_seed%d", tc.spec.Kind, tc.spec.M, tc.spec.Degree, tc.n, seed)
			t.Run(name, func(t *testing.T) {
				e, err := Edges(tc.spec, tc.n, seed)
				if err != nil {
					t.Fatal(err)
				}
				checkSimple(t, tc.n, e)
				if len(e) != tc.wantEdges {
					t.Errorf("%d edges, want %d", len(e), tc.wantEdges)
				}
				if !connected(tc.n, e) {
					t.Errorf("graph is not connected")
				}
				for v, d := range degrees(tc.n, e) {
					if tc.wantDegree > 0 && d != tc.wantDegree {
						t.Errorf("node %d has degree %d, want %d", v, d, tc.wantDegree)
					}
					// The starting star's leaves (1..m) may keep fewer
					// than m links; every later node has at least m.
					if d < tc.minDegree && (tc.spec.Kind != BarabasiAlbert || v > tc.spec.M) || d < 1 && tc.n > 1 {
						t.Errorf("node %d has degree %d, want >= %d", v, d, tc.minDegree)
					}
				}
			})
		}
	}
}

// TestBarabasiAlbertHeavyTail checks preferential attachment: the hubs far
// exceed the mean degree (a random-regular or Erdős–Rényi graph of the same
// size would not), and the low degrees dominate.
func TestBarabasiAlbertHeavyTail(t *testing.T) {
	const n, m = 1000, 2
	for _, seed := range []uint64{1, 42, 7} {
		e, err := Edges(Spec{Kind: BarabasiAlbert, M: m}, n, seed)
		if err != nil {
			t.Fatal(err)
		}
		d := degrees(n, e)
		sort.Sort(sort.Reverse(sort.IntSlice(d)))
		mean := float64(2*len(e)) / n // ~2m
		if float64(d[0]) < 8*mean {
			t.Errorf("seed %d: max degree %d, want a hub >= 8x the mean %.1f", seed, d[0], mean)
		}
		low := 0
		for _, x := range d {
			if x <= 2*m {
				low++
			}
		}
		if low < n/2 {
			t.Errorf("seed %d: %d of %d nodes have degree <= %d, want most", seed, low, n, 2*m)
		}
	}
}

func TestSeeds(t *testing.T) {
	for _, s := range []Spec{{Kind: BarabasiAlbert, M: 6}, {Kind: RandomRegular, Degree: 4}} {
		a, _ := Edges(s, 95, 42)
		b, _ := Edges(s, 95, 42)
		c, _ := Edges(s, 95, 43)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different edges", s.Kind)
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: seeds 42 and 43 gave the same edges", s.Kind)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		n    int
		want string
	}{
		{Spec{Kind: "star"}, 5, `kind "star": want one of [full line ring random-regular barabasi-albert]`},
		{Spec{Kind: BarabasiAlbert, M: 5}, 5, "m = 5: want 1 <= m < nodes (5)"},
		{Spec{Kind: BarabasiAlbert}, 5, "m = 0: want 1 <= m < nodes (5)"},
		{Spec{Kind: RandomRegular, Degree: 3}, 5, "degree = 3 with 5 nodes: nodes x degree must be even (every link has two ends)"},
		{Spec{Kind: RandomRegular, Degree: 5}, 5, "degree = 5: want 2 <= degree < nodes (5)"},
		{Spec{Kind: RandomRegular, Degree: 1}, 2, "2 nodes: random-regular needs at least 3"},
		{Spec{Kind: Full}, 0, "0 nodes: want at least 1"},
	} {
		_, err := Edges(tc.s, tc.n, 1)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Edges(%+v, %d) = %v, want %q", tc.s, tc.n, err, tc.want)
		}
	}
}

// TestGolden pins the edges of the Whiteblock graphs (seed 42, n = 95) and
// a random-regular one, so a change to a generator shows up as a diff.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		s Spec
		n int
	}{
		{Spec{Kind: BarabasiAlbert, M: 2}, 95},
		{Spec{Kind: BarabasiAlbert, M: 6}, 95},
		{Spec{Kind: BarabasiAlbert, M: 12}, 95},
		{Spec{Kind: BarabasiAlbert, M: 16}, 95},
		{Spec{Kind: RandomRegular, Degree: 4}, 20},
	} {
		var buf bytes.Buffer
		e, err := Edges(tc.s, tc.n, 42)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range e {
			fmt.Fprintf(&buf, "%d %d\n", p[0], p[1])
		}
		file := filepath.Join("testdata", fmt.Sprintf("%s_m%d_d%d_n%d_seed42.txt", tc.s.Kind, tc.s.M, tc.s.Degree, tc.n))
		testenv.Golden(t, file, buf.Bytes())
	}
}
