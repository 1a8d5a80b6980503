package capacity

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Machine{"8c/32g": {8, 32 << 30}, "2c/512m": {2, 512 << 20}, " 16C/1.5G ": {16, 3 << 29}} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"8c", "0c/1g", "8c/32", "xc/1g", "8c/-1g"} {
		if _, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "want <cores>c/<memory>g") {
			t.Errorf("ParseSize(%q): %v, want a refusal", in, err)
		}
	}
}

// TestNeedMachines: the count is what the larger of CPU and memory needs,
// per zone when zones place nodes, and at least one machine per zone.
func TestNeedMachines(t *testing.T) {
	// 100 nodes, 0.1 cores and 100 MiB each at the nominal rate.
	e := Estimate{Nodes: 100, Nominal: 1, Fixed: 2, PerRate: 8, RSS: 100 * (100 << 20), Share: 1}
	for _, tc := range []struct {
		name  string
		size  Machine
		zones map[string]int
		total int
		by    map[string]int
	}{
		{"cpu-bound", Machine{4, 64 << 30}, nil, 3, nil},                                                     // 10 cores / 4
		{"memory-bound", Machine{64, 4 << 30}, nil, 5, nil},                                                  // 10000 MiB / 2 GiB usable
		{"zones", Machine{4, 64 << 30}, map[string]int{"a": 90, "b": 10}, 4, map[string]int{"a": 3, "b": 1}}, // 9 cores: 3; 1 core: 1
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NeedMachines(e, tc.size, tc.zones)
			if err != nil {
				t.Fatal(err)
			}
			if m.Total != tc.total {
				t.Errorf("total %d, want %d (%s)", m.Total, tc.total, m)
			}
			for z, n := range tc.by {
				if m.ByZone[z] != n {
					t.Errorf("zone %s: %d, want %d", z, m.ByZone[z], n)
				}
			}
		})
	}
	if _, err := NeedMachines(e, Machine{}, nil); err == nil {
		t.Error("a zero machine size was accepted")
	}
}
