package swarm

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/plan"
)

func TestEligibleAndCheckEngines(t *testing.T) {
	p := &plan.Testnet{Nodes: []*plan.Node{{Name: "v0", Zone: "eu"}, {Name: "v1", Zone: "us"}}}
	nodes := []swarmNode{
		{ID: "m", Hostname: "mgr", Ready: true, Active: true, Zone: "eu"},
		{ID: "w1", Hostname: "w1", Addr: "10.0.0.2", Ready: true, Active: true, Zone: "us"},
		{ID: "w2", Hostname: "w2", Ready: true, Active: false, Zone: "us"}, // drained
		{ID: "w3", Hostname: "w3", Ready: false, Active: true, Zone: "eu"}, // down
	}
	for _, tc := range []struct {
		name    string
		pinned  bool // every node pinned to its zone
		engines map[string]dockercli.Engine
		want    map[string]string // node -> eligible ids
		err     string
	}{
		{"zoned, all reached", true, map[string]dockercli.Engine{"m": {}, "w1": {Host: "ssh://w1"}},
			map[string]string{"v0": "m", "v1": "w1"}, ""},
		{"unzoned, worker unreached", false, map[string]dockercli.Engine{"m": {}},
			map[string]string{"v0": "m w1", "v1": "m w1"}, "swarm node(s) w1 (id w1, address 10.0.0.2)"},
		{"zoned, the us worker unreached", true, map[string]dockercli.Engine{"m": {}, "w2": {Context: "w2"}},
			map[string]string{"v0": "m", "v1": "w1"}, "w1 (id w1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c map[string][]string
			if tc.pinned {
				c = map[string][]string{"v0": {"zone eu"}, "v1": {"zone us"}}
			}
			el := eligible(p, nodes, c)
			for n, want := range tc.want {
				if got := strings.Join(el[n], " "); got != want {
					t.Errorf("eligible for %s: %q, want %q", n, got, want)
				}
			}
			err := checkEngines(el, nodes, tc.engines)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected refusal: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("refusal %v, want one naming %q", err, tc.err)
			}
		})
	}
}

// Nodes are pinned to the swarm nodes labelled with their zone; a node
// without a zone (the manifest's default) goes anywhere, also on a swarm
// labelled for another testbed (issue 32 item 6); a named zone no swarm node
// carries is refused, naming it.
func TestPlacement(t *testing.T) {
	labelled := []swarmNode{{ID: "m", Zone: "eu"}, {ID: "w1", Zone: "us"}, {ID: "w2"}}
	for _, tc := range []struct {
		name  string
		nodes []swarmNode
		zones []string // the plan's nodes' zones, v0, v1, ...
		want  map[string]string
		err   string
	}{
		{"unlabelled swarm", []swarmNode{{ID: "m"}, {ID: "w1"}}, []string{"eu", "local"}, map[string]string{}, ""},
		{"zoned testbed", labelled, []string{"eu", "us", "eu"},
			map[string]string{"v0": "node.labels.benchnet.zone==eu", "v1": "node.labels.benchnet.zone==us", "v2": "node.labels.benchnet.zone==eu"}, ""},
		{"quickstart on a labelled swarm", labelled, []string{"local", "local"}, map[string]string{}, ""},
		{"some zoned, some not", labelled, []string{"us", "local"}, map[string]string{"v0": "node.labels.benchnet.zone==us"}, ""},
		{"a swarm node labelled local", []swarmNode{{ID: "m", Zone: "local"}, {ID: "w1", Zone: "us"}}, []string{"local"},
			map[string]string{"v0": "node.labels.benchnet.zone==local"}, ""},
		{"a zone no swarm node carries", labelled, []string{"eu", "ap", "ap"}, nil, "for zone(s) ap ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Testnet{}
			for i, z := range tc.zones {
				p.Nodes = append(p.Nodes, &plan.Node{Name: fmt.Sprintf("v%d", i), Zone: z})
			}
			c, err := placement(p, tc.nodes)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("placement: %v, want a refusal naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for n, cs := range c {
				got[n] = strings.Join(cs, " ")
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("constraints %v, want %v", got, tc.want)
			}
			el := eligible(p, []swarmNode{{ID: "a", Ready: true, Active: true, Zone: "eu"}, {ID: "b", Ready: true, Active: true}}, c)
			for _, n := range p.Nodes {
				if _, pinned := tc.want[n.Name]; !pinned && len(el[n.Name]) != 2 {
					t.Errorf("%s is not pinned but may run on %v only", n.Name, el[n.Name])
				}
			}
		})
	}
}

func TestEngineNames(t *testing.T) {
	for _, s := range []string{"ssh://root@w1", "unix:///run/x/docker.sock", "tcp://10.0.0.2:2375", "w1"} {
		e := parseEngine(s)
		if back := engineFromState(stateName(e)); back != e {
			t.Errorf("%q: parsed %+v, state round trip %+v", s, e, back)
		}
	}
	if e := parseEngine("w1"); e.Context != "w1" || strings.Join(e.Args(), " ") != "--context w1" {
		t.Errorf("context entry: %+v %v", e, e.Args())
	}
	if e := parseEngine("ssh://w1"); strings.Join(e.Args(), " ") != "-H ssh://w1" {
		t.Errorf("host entry: %v", e.Args())
	}
}

// A pid another engine reports is taken as this machine's only when its
// cgroup names the container: not for a short id, pid 0, a pid that does
// not exist here, or a live process of another cgroup (this test's own).
// The positive case needs a container on a second engine of this machine:
// TestSwarmMultiEngine (cmd/benchnet) checks every node has a host pid.
func TestOnThisMachine(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name      string
		pid       int
		container string
	}{
		{"no pid", 0, id},
		{"short id", os.Getpid(), "abcdef012345"},
		{"no such process", 1 << 30, id},
		{"another cgroup", os.Getpid(), id},
	} {
		if onThisMachine(tc.pid, tc.container) {
			t.Errorf("%s: pid %d taken as container %s's", tc.name, tc.pid, tc.container)
		}
	}
}

// TestMachineNames: a machine is its hostname, with its short id where
// hostnames repeat (several engines of one machine) or are empty.
func TestMachineNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []swarmNode
		want  map[string]string
	}{
		{"distinct", []swarmNode{{ID: "aaaaaaaaaaaaaaaa1", Hostname: "eu-1"}, {ID: "bbbbbbbbbbbbbbbb2", Hostname: "us-1"}},
			map[string]string{"aaaaaaaaaaaaaaaa1": "eu-1", "bbbbbbbbbbbbbbbb2": "us-1"}},
		{"repeated", []swarmNode{{ID: "aaaaaaaaaaaaaaaa1", Hostname: "box"}, {ID: "bbbbbbbbbbbbbbbb2", Hostname: "box"}, {ID: "c3", Hostname: "other"}},
			map[string]string{"aaaaaaaaaaaaaaaa1": "box-aaaaaaaaaaaa", "bbbbbbbbbbbbbbbb2": "box-bbbbbbbbbbbb", "c3": "other"}},
		{"empty", []swarmNode{{ID: "d4"}}, map[string]string{"d4": "d4"}},
	} {
		if got := machineNames(tc.nodes); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
