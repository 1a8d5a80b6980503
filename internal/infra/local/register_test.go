package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// A subnet held by another benchnet run's bridge names that run and how to
// remove it; any other interface only asks for another subnet.
func TestSubnetHint(t *testing.T) {
	t.Setenv(proctable.RuntimeDirEnv, t.TempDir())
	runDir := t.TempDir()
	state := filepath.Join(runDir, "state.json")
	if err := os.WriteFile(state, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := proctable.Register("89d1c5", state); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ifname, want string }{
		{"bn89d1c5br", "benchnet run 89d1c5 (" + runDir + "), still up: `benchnet down " + runDir + "`"},
		{"bn0badc0br", "benchnet run 0badc0, whose state is gone: `benchnet down --all`"},
		{"bn89d1c5h3", "pick another network.subnet"},
		{"eth0", "pick another network.subnet"},
		{"docker0", "pick another network.subnet"},
	} {
		got := subnetHint(tc.ifname)
		if !strings.Contains(got, tc.want) {
			t.Errorf("subnetHint(%q) = %q, want it to contain %q", tc.ifname, got, tc.want)
		}
		if tc.want != "pick another network.subnet" && !strings.Contains(got, "benchnet run") {
			t.Errorf("subnetHint(%q) = %q names no run", tc.ifname, got)
		}
	}
}
