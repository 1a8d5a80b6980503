package plan_test

import (
	"bytes"
	"testing"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// TestKindTablesRoundTrip: a kind's own tables go into plan.json under
// their names and come back for the kind to decode, and the plan written
// again from what was read is the same bytes.
func TestKindTablesRoundTrip(t *testing.T) {
	m, err := manifest.Parse("g.toml", []byte("[node.g]\nkind = \"gossipsub\"\ncount = 3\n[publish]\ncount = 10\n[gossipsub]\nd = 4\ndlo = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := plan.ReadJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var tables spec.Tables
	if err := back.KindTables(&tables); err != nil {
		t.Fatal(err)
	}
	if g := tables.Gossipsub; g.D != 4 || g.Dlo != 3 || g.Dhi != spec.DefaultDhi {
		t.Errorf("tables read back: %+v", g)
	}
	again, err := back.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Errorf("plan.json written again differs:\n%s\n---\n%s", data, again)
	}
	if !bytes.Contains(data, []byte("  \"gossipsub\": {\n    \"d\": 4,")) {
		t.Errorf("plan.json has no [gossipsub] table:\n%s", data)
	}
}
