package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepUsageErrors: a bad sweep is refused with exit 2 before any
// directory exists, and the message names the flag or the manifest line.
func TestSweepUsageErrors(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sweep.toml")
	base, err := os.ReadFile("../../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte(nil), base...), "\n[sweep]\nrates = [100, 100]\nrepeat = 2\n"...)
	if err := os.WriteFile(table, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--rates", "0,100"}, []string{"invalid flag --rates: 0: want a positive finite rate"}},
		{[]string{"--connections-list", "1,1", "--rates", "100"}, []string{"--connections-list: 1 given twice"}},
		{[]string{"--connections", "0", "--rates", "100"}, []string{"invalid flag --connections:"}},
		{[]string{"--connections", "1", "--connections-list", "1,2"}, []string{"--connections and --connections-list: give one"}},
		{[]string{"--count", "100"}, []string{"--count: a sweep's cells are constant loads over --duration"}},
		{[]string{"--transport", "pigeon"}, []string{"invalid flag --transport:"}},
		{[]string{"--duration", "100ms"}, []string{"--duration: 100ms: want at least 1s"}},
		{[]string{"--search", "--connections-list", "1,2"}, []string{"--connections-list: a search runs at one connection count"}},
		{[]string{"--search", "--connections", "1", "--max-rate", "5"}, []string{"invalid flag --max-rate: want a rate above min_rate (10), got 5", "--start-rate (default): want a rate in [min_rate, max_rate], got 200"}},
		{[]string{"--rates", "100", "--durations", "10s,10s"}, []string{"invalid flag --durations: 10s given twice"}},
		{[]string{"--rates", "100", "--durations", "500ms"}, []string{"invalid flag --durations: 500ms: want at least 1s per cell"}},
		{[]string{"--search", "--connections", "1", "--durations", "10s,20s"}, []string{"--durations: a search probes at one duration"}},
		{[]string{"--precision", "banana"}, []string{`--precision: "banana"`}},
		{[]string{"--rates", "100", "--min-committed", "1.5"}, []string{"invalid flag --min-committed: want a fraction in (0, 1], got 1.5"}},
		{[]string{table}, []string{"sweep.toml:", "sweep.repeat: unknown key"}},
		{[]string{"--resume", filepath.Join(dir, "nope")}, []string{"read sweep.json"}},
		{[]string{"--resume", dir, "--rates", "100"}, []string{"--resume takes the manifest and the settings from DIR"}},
	} {
		args := append([]string{"sweep", "--output", out}, tc.args...)
		got := runBinary(t, args...)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("benchnet %s: output lacks %q:\n%s", strings.Join(args, " "), w, got)
			}
		}
		if code := run(args); code != exitUsage {
			t.Errorf("benchnet %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("benchnet %s created %s", strings.Join(args, " "), out)
		}
	}
}

func TestParseFraction(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, " 12.5% ": 0.125} {
		if got, err := parseFraction(in); err != nil || got != want {
			t.Errorf("%q: %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "five"} {
		if _, err := parseFraction(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestSoakUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs")
	args := []string{"soak", "--output", out, "--rate", "0", "--duration", "10s", "--bootstrap", "5"}
	got := runBinary(t, args...)
	for _, w := range []string{"invalid flag --rate: 0:", "--duration: 10s: a decay needs at least 30s", "--bootstrap: 5:"} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	if code := run(args); code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("soak created %s", out)
	}
}
