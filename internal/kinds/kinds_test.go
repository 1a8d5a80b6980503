package kinds_test

import (
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	_ "github.com/benchnet/benchnet/internal/kinds"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/kinds/kind"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/report"
)

// TestEveryKindWhole: the registries the frame reads by a run's kind hold
// exactly the kinds linked through kind.Register, so no kind registers a
// part around its descriptor and none links without one (kind.Register
// itself refuses a descriptor with a part left out).
func TestEveryKindWhole(t *testing.T) {
	linked := kind.Names()
	if want := []string{manifest.KindCometBFT, spec.Name}; !slices.Equal(linked, want) {
		t.Fatalf("kind.Register linked %v, want %v", linked, want)
	}
	for _, reg := range []struct {
		name  string
		kinds []string
	}{
		{"manifest.RegisterKind", manifest.Kinds()},
		{"judge.RegisterKind", judge.Kinds()},
		{"node.Register", node.Kinds()},
		{"capacity.Register", capacity.Kinds()},
		{"analyze.Register", analyze.Kinds()},
		{"figures.Register", figures.Kinds()},
		{"report.RegisterKind", report.Kinds()},
	} {
		if !slices.Equal(reg.kinds, linked) {
			t.Errorf("%s holds %v, kind.Register linked %v", reg.name, reg.kinds, linked)
		}
	}
}

// TestWorkloadIsACapability: a kind's manifest schema says it publishes
// (its workload is [publish]) exactly when its driver is a node.Publisher,
// and takes [load]'s txs exactly when it is a node.TxChain: the frame asks
// for the capability, never for the kind's name.
func TestWorkloadIsACapability(t *testing.T) {
	for _, name := range kind.Names() {
		d, err := node.New(name, node.Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, publisher := d.(node.Publisher)
		_, txChain := d.(node.TxChain)
		s := manifest.SchemaOf(name)
		if s.Publishes != publisher || s.Publishes == txChain {
			t.Errorf("%s: schema publishes %v, driver is a node.Publisher %v, a node.TxChain %v", name, s.Publishes, publisher, txChain)
		}
		if s.NoChain {
			if _, chain := d.(node.Chain); chain {
				t.Errorf("%s: schema says no chain, driver is a node.Chain", name)
			}
		}
	}
}
