package swarm

import (
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
		zoned   bool
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
			el := eligible(p, nodes, tc.zoned)
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
