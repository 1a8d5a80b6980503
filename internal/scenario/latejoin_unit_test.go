package scenario

import (
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// TestLoadTargets: the load goes to the load nodes that run; each other one
// is skipped with its reason, and the kv load (validators only) never
// targets a full node.
func TestLoadTargets(t *testing.T) {
	m, err := manifest.Parse("m.toml", []byte(`name = "t"
[node.validator]
count = 2
app = "accounts"
[node.full]
role = "full"
count = 2
app = "accounts"
start_delay = "5s"
[node.eph]
role = "full"
count = 1
app = "accounts"
[rotate]
group = "eph"
cycles = 1
[load]
workload = "accounts"
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := txChain(p)
	if err != nil {
		t.Fatal(err)
	}
	absent := map[string]bool{"full1": true, "eph0": true}
	running := func(n string) bool { return !absent[n] }
	targets, skipped := loadTargets(chain, p, m.Load, running)
	var names []string
	for _, tg := range targets {
		names = append(names, tg.Node)
	}
	if got := strings.Join(names, " "); got != "full0 validator0 validator1" && got != "validator0 validator1 full0" {
		t.Errorf("targets %q", got)
	}
	why := map[string]string{}
	for _, s := range skipped {
		why[s.Node] = s.Reason
	}
	if len(why) != 2 || !strings.Contains(why["full1"], "start_delay 5s") || !strings.Contains(why["eph0"], "[rotate]") ||
		!strings.Contains(why["full1"], "share went to the running targets") {
		t.Errorf("skipped %v", why)
	}
	kv := m.Load
	kv.Workload = manifest.WorkloadKV
	targets, skipped = loadTargets(chain, p, kv, running)
	if len(targets) != 2 || len(skipped) != 0 {
		t.Errorf("kv: targets %v, skipped %v: want the 2 validators", targets, skipped)
	}
}
