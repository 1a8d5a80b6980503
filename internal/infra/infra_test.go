package infra

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/caps"
)

// TestCapsAndSweepAll: a runner's declared capabilities are what Caps
// returns by name (the zero record for an unknown one), and SweepAll runs
// every registered sweep, joining their errors with the runner's name.
func TestCapsAndSweepAll(t *testing.T) {
	swept := map[string]bool{}
	Register("test-a", Kind{Caps: caps.Record{ConcurrentStarts: 4, AutoLinks: "userspace"},
		Sweep: func(context.Context) error { swept["a"] = true; return nil }})
	Register("test-b", Kind{Sweep: func(context.Context) error { swept["b"] = true; return errors.New("boom") }})
	Register("test-c", Kind{}) // nothing to sweep
	t.Cleanup(func() {
		for _, n := range []string{"test-a", "test-b", "test-c"} {
			kinds.Unregister(n)
		}
	})
	if c := Caps("test-a"); c.ConcurrentStarts != 4 || c.AutoLinks != "userspace" {
		t.Errorf("Caps(test-a) = %+v", c)
	}
	if c := Caps("no-such-runner"); !reflect.DeepEqual(c, caps.Record{}) {
		t.Errorf("Caps of an unknown runner = %+v, want the zero record", c)
	}
	err := SweepAll(context.Background())
	if !swept["a"] || !swept["b"] {
		t.Errorf("swept %v, want a and b", swept)
	}
	if err == nil || !strings.Contains(err.Error(), "sweep test-b: boom") {
		t.Errorf("SweepAll error %v, want test-b's named", err)
	}
}

// Mounts: homes, then the other directories, then the working directory,
// each once and none empty.
func TestProcessMounts(t *testing.T) {
	p := Process{Dir: "/r/homes/n", ChownDirs: []string{"/r/homes/n", ""}, Dirs: []string{"/r/traces", "/r/homes/n"}}
	if got, want := p.Mounts(), []string{"/r/homes/n", "/r/traces"}; !slices.Equal(got, want) {
		t.Errorf("Mounts() = %q, want %q", got, want)
	}
	if got := (Process{}).Mounts(); len(got) != 0 {
		t.Errorf("empty process mounts %q", got)
	}
}
