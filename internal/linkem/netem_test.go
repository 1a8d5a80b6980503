package linkem

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"

	"github.com/benchnet/benchnet/internal/manifest"
)

func nsOf(node string) string { return "bn-" + node }

// renderRules is every node's commands, one per line.
func renderRules(s *Snapshot) string {
	var b strings.Builder
	for i, n := range s.Nodes {
		fmt.Fprintf(&b, "# %s zone=%s addr=%s\n", n.Name, n.Zone, n.Addr)
		for _, c := range NetemRules(s, i, "eth0", nsOf(n.Name)) {
			b.WriteString(strings.Join(c, " ") + "\n")
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), []byte(got))
}

func awsPlanModel(t *testing.T) *Model {
	t.Helper()
	m, err := Build(testPlan(manifest.Network{Zones: "aws", Jitter: "5%", Loss: "0.1%"},
		"N_Virginia", "Canada", "N_California", "London", "Oregon", "Ireland", "Frankfurt",
		"S_Paulo", "Tokyo", "Mumbai", "Sydney", "Seoul", "Singapore", "Tokyo"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func threeZoneModel(t *testing.T) *Model {
	t.Helper()
	m, err := Build(testPlan(manifest.Network{Zones: "testdata/zones3.csv", Jitter: "5%", Loss: "0.1%", Bandwidth: "10mbit"},
		"east", "west", "far", "east"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNetemGolden(t *testing.T) {
	golden(t, "netem-3zone.golden", renderRules(threeZoneModel(t).Snapshot()))
	golden(t, "netem-aws.golden", renderRules(awsPlanModel(t).Snapshot()))
}

// tcState is what a node's tc commands build, read back from the argument
// lists the way the kernel would see them.
type tcState struct {
	defClass string
	parent   map[string]string // class → parent
	rate     map[string]string // class → htb rate
	netem    map[string]Link   // class → its netem leaf
	filter   map[string]string // destination address → class
}

func parseTC(t *testing.T, cmds [][]string) tcState {
	t.Helper()
	st := tcState{parent: map[string]string{}, rate: map[string]string{}, netem: map[string]Link{}, filter: map[string]string{}}
	arg := func(c []string, key string) string {
		for i := range c[:len(c)-1] {
			if c[i] == key {
				return c[i+1]
			}
		}
		return ""
	}
	dur := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("tc time %q: %v", s, err)
		}
		return d
	}
	for _, c := range cmds {
		if len(c) < 7 || strings.Join(c[:3], " ") != "ip netns exec" || c[4] != "tc" || c[6] != "add" {
			t.Fatalf("not an ip netns exec NS tc … add command: %q", c)
		}
		switch c[5] {
		case "qdisc":
			if slices.Contains(c, "root") {
				st.defClass = "1:" + arg(c, "default")
				continue
			}
			var l Link
			l.Delay = dur(arg(c, "delay"))
			for i, a := range c {
				if a == "delay" && i+3 < len(c) && c[i+3] == "distribution" {
					l.Jitter = dur(c[i+2])
				}
			}
			if s := arg(c, "loss"); s != "" {
				v, _ := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
				l.Loss = v / 100
			}
			st.netem[arg(c, "parent")] = l
		case "class":
			st.parent[arg(c, "classid")] = arg(c, "parent")
			st.rate[arg(c, "classid")] = arg(c, "rate")
		case "filter":
			dst := strings.TrimSuffix(arg(c, "dst"), "/32")
			if _, dup := st.filter[dst]; dup {
				t.Errorf("two filters for %s", dst)
			}
			st.filter[dst] = arg(c, "flowid")
		}
	}
	return st
}

// walkEveryPair checks, for every ordered pair (A, B), that a packet from A
// to B's address is classified into a class under A's uplink whose netem
// leaf has exactly the model's link A→B.
func walkEveryPair(t *testing.T, s *Snapshot) {
	t.Helper()
	for i, a := range s.Nodes {
		st := parseTC(t, NetemRules(s, i, "eth0", nsOf(a.Name)))
		if st.defClass != "1:2" {
			t.Errorf("%s: default class %q", a.Name, st.defClass)
		}
		wantRate := "10gbit"
		if a.Rate > 0 {
			wantRate = FormatRate(a.Rate)
		}
		if st.rate["1:1"] != wantRate || st.parent["1:1"] != "1:" {
			t.Errorf("%s: uplink class 1:1 rate %q parent %q, want %s under root", a.Name, st.rate["1:1"], st.parent["1:1"], wantRate)
		}
		for j, b := range s.Nodes {
			if i == j {
				continue
			}
			cls, ok := st.filter[b.Addr.String()]
			if !ok {
				t.Errorf("%s→%s: no filter for %s: the packet takes the unemulated default class", a.Name, b.Name, b.Addr)
				continue
			}
			if st.parent[cls] != "1:1" {
				t.Errorf("%s→%s: class %s is not under the uplink 1:1", a.Name, b.Name, cls)
			}
			got, ok := st.netem[cls]
			if want := s.Links[i][j]; !ok || got != want {
				t.Errorf("%s→%s (zone %s→%s): class %s netem %v, want %v", a.Name, b.Name, a.Zone, b.Zone, cls, got, want)
			}
		}
	}
}

func TestNetemEveryPairHitsItsDelay(t *testing.T) {
	m := threeZoneModel(t)
	walkEveryPair(t, m.Snapshot())
	aws := awsPlanModel(t)
	s := aws.Snapshot()
	walkEveryPair(t, s)
	// The walk compares with the model; pin the model to the matrix too.
	for i, a := range s.Nodes {
		for j, b := range s.Nodes {
			if i != j && s.Links[i][j].Delay != aws.Matrix.OneWay(a.Zone, b.Zone) {
				t.Errorf("%s→%s delay %v, matrix %v", a.Name, b.Name, s.Links[i][j].Delay, aws.Matrix.OneWay(a.Zone, b.Zone))
			}
		}
	}
	// Per-link overrides and partitions get classes of their own.
	if err := m.SetLink("validator0", "validator3", Link{Delay: 7 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := m.Partition([]string{"validator1"}, []string{"validator2"}); err != nil {
		t.Fatal(err)
	}
	walkEveryPair(t, m.Snapshot())
}

// TestNetemApply runs Apply against a recording Exec: first install, then
// only the changed nodes are replaced, Close removes what was installed.
func TestNetemApply(t *testing.T) {
	var log []string
	n := NewNetem(NetemConfig{Netns: nsOf, Exec: func(_ context.Context, argv []string) error {
		log = append(log, strings.Join(argv, " "))
		return nil
	}})
	m := threeZoneModel(t)
	ctx := context.Background()
	if err := n.Apply(ctx, m); err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(renderRules(m.Snapshot()), "\nip "); len(log) != want {
		t.Errorf("first apply ran %d commands, want %d", len(log), want)
	}
	log = nil
	if err := n.Apply(ctx, m); err != nil || len(log) != 0 {
		t.Errorf("unchanged apply ran %q, %v", log, err)
	}
	if err := m.SetLink("validator1", "validator0", Link{Delay: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := n.Apply(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 || log[0] != "ip netns exec bn-validator1 tc qdisc del dev eth0 root" {
		t.Fatalf("change did not start by removing validator1's rules: %q", log)
	}
	for _, l := range log {
		if !strings.Contains(l, "bn-validator1 ") {
			t.Errorf("unchanged node touched: %s", l)
		}
	}
	log = nil
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if len(log) != 4 {
		t.Errorf("close ran %q, want one root delete per node", log)
	}
}

func TestDetect(t *testing.T) {
	testenv.NeedRoot(t) // Detect probes with a throwaway network namespace
	b, reason := Detect(context.Background())
	t.Logf("Detect: %s (%s)", b, reason)
	switch b {
	case KindNetem:
	case KindUserspace:
		if !strings.Contains(reason, "sch_netem") {
			t.Errorf("reason %q does not name sch_netem", reason)
		}
	default:
		t.Errorf("backend %q", b)
	}
	out, _ := run(context.Background(), "ip", "netns", "list")
	if strings.Contains(string(out), "bnt-detect-") {
		t.Errorf("probe namespace left behind: %s", out)
	}
}
