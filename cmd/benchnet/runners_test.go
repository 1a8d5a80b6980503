package main

import (
	"testing"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/manifest"
)

// TestRunnersDeclareCapabilities: every runner a manifest may name is built
// into the binary with its capabilities record, so the manifest's runner
// refusals (which a binary without the runner skips) always apply here.
func TestRunnersDeclareCapabilities(t *testing.T) {
	for _, name := range manifest.Runners {
		if _, ok := caps.Of(name); !ok {
			t.Errorf("runner %q: no capabilities record in this binary", name)
		}
	}
	if got := caps.Where(func(r caps.Record) bool { return r.DynamicBinaries }); len(got) != 1 || got[0] != "local" {
		t.Errorf("runners that exec dynamic binaries: %v, want only local (containers are FROM scratch)", got)
	}
}
