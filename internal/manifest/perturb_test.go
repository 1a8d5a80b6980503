package manifest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const faultBase = `name = "f"
seed = 7
[network]
linkem = "userspace"
[node.validator]
count = 4
[node.eph]
role = "full"
count = 2
[load]
rate = 10
duration = "60s"
`

func TestPerturbValidation(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		want        []string // substrings of the error, each with its file:line
	}{
		{"ok", "[[perturb]]\nat = \"5s\"\nnode = \"validator1\"\naction = \"kill\"\nfor = \"5s\"\n", nil},
		{"bad action", "[[perturb]]\nat = \"5s\"\nnode = \"validator1\"\naction = \"explode\"\n",
			[]string{`m.toml:16: perturb[0].action: "explode": want one of`}},
		{"unknown node, second entry", "[[perturb]]\nat = \"1s\"\nnode = \"validator0\"\naction = \"pause\"\n[[perturb]]\nat = \"5s\"\nnode = \"validator9\"\naction = \"kill\"\n",
			[]string{`m.toml:19: perturb[1].node: "validator9" is neither a node nor a group`}},
		{"both node and nodes", "[[perturb]]\nnode = \"validator0\"\nnodes = [\"validator1\"]\naction = \"kill\"\n",
			[]string{`m.toml:15: perturb[0].nodes: give node or nodes, not both`}},
		{"no target", "[[perturb]]\naction = \"kill\"\n", []string{`m.toml:13: perturb[0].node: kill needs node`}},
		{"resume with for", "[[perturb]]\nnode = \"validator0\"\naction = \"resume\"\nfor = \"1s\"\n",
			[]string{`m.toml:16: perturb[0].for: resume is itself an undo`}},
		{"heal with node", "[[perturb]]\nnode = \"validator0\"\naction = \"heal\"\n", []string{`m.toml:14: perturb[0].node: heal removes every cut`}},
		{"negative at", "[[perturb]]\nat = \"-1s\"\nnode = \"random:validator\"\naction = \"pause\"\n", []string{`m.toml:14: perturb[0].at: -1s`}},
		{"bad random group", "[[perturb]]\nnode = \"random:nope\"\naction = \"pause\"\n", []string{`perturb[0].node: "random:nope": no group "nope"`}},
		{"rotating node perturbed", "[[perturb]]\nnode = \"eph0\"\naction = \"kill\"\n[rotate]\ngroup = \"eph\"\ncycles = 2\n",
			[]string{`perturb[0].node: eph0 belongs to the rotating group "eph"`}},
		{"rotate validators", "[rotate]\ngroup = \"validator\"\ncycles = 2\n", []string{`m.toml:14: rotate.group: "validator" has role "validator"`}},
		{"rotate too many", "[rotate]\ngroup = \"eph\"\ncycles = 0\nat_a_time = 3\n",
			[]string{`m.toml:15: rotate.cycles: 0: want 1 to 10000`, `m.toml:16: rotate.at_a_time: 3: want 1 to the group's count (2)`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, faultBase+tc.extra, tc.want) })
	}
}

// checkParse parses src as m.toml: no error when want is empty, else one
// holding each of want. It returns the error.
func checkParse(t *testing.T, src string, want []string) error {
	t.Helper()
	_, err := Parse("m.toml", []byte(src))
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return nil
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
	return err
}

func TestLinkActionNeedsLinkem(t *testing.T) {
	src := strings.Replace(faultBase, `linkem = "userspace"`, `linkem = "auto"`, 1) + "[[perturb]]\nnode = \"validator0\"\naction = \"disconnect\"\n"
	_, err := Parse("m.toml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `m.toml:15: perturb[0].action: disconnect changes links`) {
		t.Fatalf("got %v", err)
	}
}

func TestPerturbSteps(t *testing.T) {
	src := faultBase + `[[perturb]]
at = "10s"
node = "validator"
action = "pause"
for = "2s"
[[perturb]]
at = "1s"
nodes = ["validator1", "validator2"]
action = "partition"
for = "20s"
[[perturb]]
at = "3s"
node = "random:validator"
action = "wipe-restart"
for = "4s"
`
	m, err := Parse("m.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.HaltLimit.Duration != DefaultHaltLimit {
		t.Errorf("halt_limit default = %s", m.HaltLimit.Duration)
	}
	steps, err := m.PerturbSteps()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, s.At.String()+" "+s.Action+" "+strings.Join(s.Nodes, ","))
	}
	// The random pick is drawn from seed 7: the same every time.
	again, _ := m.PerturbSteps()
	if !slices.EqualFunc(steps, again, func(a, b Step) bool { return slices.Equal(a.Nodes, b.Nodes) }) {
		t.Errorf("random pick not reproducible: %v vs %v", steps, again)
	}
	pick := steps[1].Nodes
	want := []string{
		"1s partition validator1,validator2",
		"3s wipe-restart " + strings.Join(pick, ","),
		"10s pause validator0,validator1,validator2,validator3",
		"12s resume validator0,validator1,validator2,validator3",
		"21s heal validator1,validator2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(pick) != 1 || !strings.HasPrefix(pick[0], "validator") {
		t.Errorf("random pick %v", pick)
	}
	if steps[2].For != 2*time.Second || !steps[3].Undo {
		t.Errorf("for/undo: %+v %+v", steps[2], steps[3])
	}
}

// TestGossipRefusesChainFaults: a gossipsub host keeps no chain state, so
// neither a wipe-restart (reset to genesis) nor [rotate] (block-syncing
// full nodes) applies to it; both are refused at their line.
func TestGossipRefusesChainFaults(t *testing.T) {
	const gossipBase = `name = "g"
seed = 7
[network]
topology = "line"
[node.gossip]
kind = "gossipsub"
count = 4
[publish]
rate = 10
count = 50
`
	for _, tc := range []struct {
		name, extra string
		want        []string // substrings of the error, each with its file:line
	}{
		{"kill ok", "[[perturb]]\nat = \"1s\"\nnode = \"gossip1\"\naction = \"kill\"\nfor = \"2s\"\n", nil},
		{"pause, restart ok", "[[perturb]]\nnode = \"gossip1\"\naction = \"pause\"\nfor = \"1s\"\n[[perturb]]\nat = \"3s\"\nnode = \"gossip2\"\naction = \"restart\"\n", nil},
		{"partition without linkem", "[[perturb]]\nnodes = [\"gossip0\", \"gossip1\"]\naction = \"partition\"\n",
			[]string{`m.toml:13: perturb[0].action: partition changes links: set [network].linkem`}},
		{"wipe-restart", "[[perturb]]\nat = \"1s\"\nnode = \"gossip1\"\naction = \"wipe-restart\"\nfor = \"2s\"\n",
			[]string{`m.toml:14: perturb[0].action: wipe-restart resets a node's chain state to genesis: a gossipsub host keeps none`}},
		{"wipe-restart, second entry", "[[perturb]]\nnode = \"gossip0\"\naction = \"pause\"\n[[perturb]]\nnode = \"gossip2\"\naction = \"wipe-restart\"\n",
			[]string{`m.toml:16: perturb[1].action: wipe-restart`}},
		{"rotate", "[rotate]\ngroup = \"gossip\"\ncycles = 2\n",
			[]string{`m.toml:11: rotate: [rotate] cycles full nodes that block-sync to the tip: a gossipsub testnet has no chain`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkParse(t, gossipBase+tc.extra, tc.want)
			if err != nil && strings.Contains(err.Error(), "role") {
				t.Errorf("error %q speaks of roles, which gossip groups do not have", err)
			}
		})
	}
	// halt_limit (a chain halting) means nothing without a chain.
	checkParse(t, strings.Replace(gossipBase, "seed = 7\n", "seed = 7\nhalt_limit = \"30s\"\n", 1),
		[]string{`m.toml:3: halt_limit: halt_limit ends a run whose chain stops making blocks: a gossipsub testnet has no chain`})
	// The same wipe-restart is fine for a CometBFT testnet.
	if _, err := Parse("m.toml", []byte(faultBase+"[[perturb]]\nnode = \"validator1\"\naction = \"wipe-restart\"\nfor = \"2s\"\n")); err != nil {
		t.Errorf("CometBFT wipe-restart: %v", err)
	}
}

// TestRotateNodeNotALoadTarget: the accounts workload may not name a
// rotating node as its target (up never starts it, run only during the load).
func TestRotateNodeNotALoadTarget(t *testing.T) {
	src := `name = "f"
[node.validator]
count = 4
app = "accounts"
[node.eph]
role = "full"
count = 2
app = "accounts"
[rotate]
group = "eph"
cycles = 2
[load]
workload = "accounts"
target = "%s"
`
	_, err := Parse("m.toml", []byte(strings.Replace(src, "%s", "eph1", 1)))
	if err == nil || !strings.Contains(err.Error(), `load.target: "eph1" is a node of the [rotate] group "eph"`) {
		t.Fatalf("got %v", err)
	}
	if _, err := Parse("m.toml", []byte(strings.Replace(src, "%s", "validator1", 1))); err != nil {
		t.Fatalf("a validator target: %v", err)
	}
}
