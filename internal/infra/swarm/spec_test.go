package swarm

import (
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/plan"
)

func TestQuoteWords(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"start", "--home", "/runs/x/homes/validator0"}, `'start' '--home' '/runs/x/homes/validator0'`},
		{[]string{"a b", "it's", ""}, `'a b' 'it'\''s' ''`},
		{nil, ""},
	} {
		if got := quoteWords(c.in); got != c.want {
			t.Errorf("quoteWords(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestUpdateArgs(t *testing.T) {
	sp := &spec{node: "validator0", image: "benchnet/x:cometbft-abc", argv: []string{"/bin/cometbft", "start", "--home", "/h"},
		env: []string{"HOME=/h"}, workdir: "/h", volumes: []volume{{name: "benchnet-abc123-validator0-0", path: "/h"}},
		ports: []int{26657, 26660}, cpus: 0.5}
	got := strings.Join(sp.updateArgs("benchnet.run=abc123"), " ")
	for _, want := range []string{
		"--entrypoint '/bin/cometbft' --args 'start' '--home' '/h'",
		"--publish-add mode=host,target=26657 --publish-add mode=host,target=26660",
		"--mount-add type=volume,source=benchnet-abc123-validator0-0,target=/h,volume-nocopy=true,volume-driver=local,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/h,volume-label=benchnet.run=abc123",
		"--limit-cpu 0.5", "--replicas 1", "--container-label-add benchnet.run=abc123",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("update args lack %q:\n%s", want, got)
		}
	}
}

// A home copied to the engines (some engine that may run the node is not
// this machine's) is a plain local volume: no bind to the run directory,
// which need not exist there.
func TestUpdateArgsCopiedHome(t *testing.T) {
	sp := &spec{node: "validator0", image: "benchnet/x:cometbft-abc", argv: []string{"/bin/cometbft", "start"},
		volumes: []volume{{name: "benchnet-abc123-validator0-0", path: "/h", copied: true}}}
	got := strings.Join(sp.updateArgs("benchnet.run=abc123"), " ")
	want := "--mount-add type=volume,source=benchnet-abc123-validator0-0,target=/h,volume-nocopy=true,volume-driver=local,volume-label=benchnet.run=abc123"
	if !strings.Contains(got, want) || strings.Contains(got, "o=bind") {
		t.Errorf("update args: want %q and no bind:\n%s", want, got)
	}
}

// The engine bound RPC (26657) to 33390 on IPv4 and 33389 on IPv6, and
// metrics (26660) to 33389 on IPv4: the IPv4 binding is the one to dial.
func TestParseIPv4Ports(t *testing.T) {
	type b = struct{ HostIp, HostPort string }
	got := parseIPv4Ports(map[string][]b{
		"26657/tcp": {{"::", "33389"}, {"0.0.0.0", "33390"}},
		"26660/tcp": {{"0.0.0.0", "33389"}, {"::", "33388"}},
		"26656/udp": {{"0.0.0.0", "1"}},
	})
	want := []port{{26657, 33390}, {26660, 33389}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A directory the process writes beside its home (a gossip host's
// traces/) is a volume like its home: bound where the home is bound, and
// where homes are copied, an out volume (created empty, copied back after
// the task) that deliverHomes never fills.
func TestSpecOfDirs(t *testing.T) {
	r := &Runner{}
	s := &service{name: "benchnet-abc123-gossip1", node: &plan.Node{Name: "gossip1", RPCPort: 26657, PrometheusPort: 26660}}
	proc := infra.Process{Node: "gossip1", Argv: []string{"/bin/benchnet", "node", "gossipsub"}, Dir: "/run/homes/gossip1",
		ChownDirs: []string{"/run/homes/gossip1"}, Dirs: []string{"/run/traces"}}
	for _, copied := range []bool{false, true} {
		sp := r.specOf(s, proc, "benchnet/x:benchnet-abc", copied)
		want := []volume{
			{name: "benchnet-abc123-gossip1-0", path: "/run/homes/gossip1", copied: copied},
			{name: "benchnet-abc123-gossip1-1", path: "/run/traces", copied: copied, out: copied},
		}
		if !slices.Equal(sp.volumes, want) {
			t.Errorf("copied %v: volumes %+v, want %+v", copied, sp.volumes, want)
		}
	}
}
