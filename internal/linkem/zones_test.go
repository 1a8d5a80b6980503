package linkem

import (
	"bytes"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

// cometCSV is CometBFT's QA latency table, shared with the project (in
// ../shared beside the repository) but not part of it.
const cometCSV = "data/aws-latencies.csv"

// TestBuiltinVsCometBFTCSV compares the coordinate-derived "aws" set with
// CometBFT's measured table: same zones in the same order, and a median
// relative error of the off-diagonal delays of at most 15 %.
func TestBuiltinVsCometBFTCSV(t *testing.T) {
	f, err := os.Open(testenv.SharedFile(t, cometCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := ParseCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Builtin("aws")
	if !slices.Equal(got.Zones, ref.Zones) {
		t.Fatalf("zones %v, want CometBFT's %v", got.Zones, ref.Zones)
	}
	var rel []float64
	var worst string
	worstErr := 0.0
	for i, a := range ref.Zones {
		for j, b := range ref.Zones {
			if i == j {
				if got.Delay[i][j] != 0 {
					t.Errorf("%s→%s = %v, want 0", a, b, got.Delay[i][j])
				}
				continue
			}
			r := math.Abs(float64(got.Delay[i][j]-ref.Delay[i][j])) / float64(ref.Delay[i][j])
			rel = append(rel, r)
			if r > worstErr {
				worstErr, worst = r, a+"→"+b+" derived "+got.Delay[i][j].String()+" vs table "+ref.Delay[i][j].String()
			}
		}
	}
	sort.Float64s(rel)
	med, p90 := rel[len(rel)/2], rel[len(rel)*9/10]
	t.Logf("route factor %.1f + %v: median relative error %.1f%%, p90 %.1f%%, worst %.0f%% (%s)",
		RouteFactor, RouteConstant, med*100, p90*100, worstErr*100, worst)
	if med > 0.15 {
		t.Errorf("median relative error %.1f%% > 15%%", med*100)
	}
	// Spot checks of the model itself: Frankfurt–London is short, Sydney–S_Paulo long.
	if d := got.OneWay("Frankfurt", "London"); d < 4*time.Millisecond || d > 12*time.Millisecond {
		t.Errorf("Frankfurt→London = %v, want 4–12ms", d)
	}
	if d := got.OneWay("Sydney", "S_Paulo"); d < 90*time.Millisecond {
		t.Errorf("Sydney→S_Paulo = %v, want ≥ 90ms", d)
	}
}

func TestParseCSVRoundTrip(t *testing.T) {
	in := "From/to,a,b\na,0,10.5\nb,11,0\n"
	m, err := ParseCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if d := m.OneWay("a", "b"); d != 10500*time.Microsecond {
		t.Errorf("a→b = %v, want 10.5ms (asymmetry kept)", d)
	}
	if d := m.OneWay("b", "a"); d != 11*time.Millisecond {
		t.Errorf("b→a = %v, want 11ms", d)
	}
	var buf bytes.Buffer
	if err := m.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != in {
		t.Errorf("round trip:\n%s\nwant\n%s", buf.String(), in)
	}
}

func TestParseCSVErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "want a header row"},
		{"dup header", "From/to,a,a\na,0,0\n", "duplicate zone"},
		{"unknown row", "From/to,a,b\na,0,1\nc,1,0\n", `line 3: zone "c" not in header`},
		{"missing row", "From/to,a,b\na,0,1\n", `no row for zone "b"`},
		{"bad value", "From/to,a,b\na,0,x\nb,1,0\n", `column b: "x"`},
		{"negative", "From/to,a,b\na,0,-1\nb,1,0\n", "is not a delay"},
		{"twice", "From/to,a,b\na,0,1\na,0,1\n", "listed twice"},
	} {
		_, err := ParseCSV(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadMatrix(t *testing.T) {
	if _, err := LoadMatrix("mars"); err == nil || !strings.Contains(err.Error(), "neither a built-in zone set") {
		t.Errorf("LoadMatrix(mars) err = %v", err)
	}
	m, err := LoadMatrix("testdata/zones3.csv")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "testdata/zones3.csv" || m.OneWay("east", "far") != 75500*time.Microsecond {
		t.Errorf("got %s east→far %v", m.Name, m.OneWay("east", "far"))
	}
}
