package caps

import (
	"slices"
	"testing"
)

func TestRecords(t *testing.T) {
	Declare("test-ns", Record{Links: []string{"netem", "userspace"}, Sidecars: true})
	Declare("test-ctr", Record{Links: []string{"userspace"}, Limits: true})
	Declare("test-cluster", Record{Limits: true, Placement: "zone"})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range []string{"test-ns", "test-ctr", "test-cluster"} {
			delete(records, n)
		}
	})
	if r, ok := Of("test-ctr"); !ok || !r.CanLink("userspace") || r.CanLink("netem") {
		t.Errorf("test-ctr: %+v %v", r, ok)
	}
	if _, ok := Of("nope"); ok {
		t.Error("an undeclared runner has a record")
	}
	if got := Where(func(r Record) bool { return r.Limits }); !slices.Equal(got, []string{"test-cluster", "test-ctr"}) {
		t.Errorf("Where(Limits) = %v", got)
	}
	if got := Where(func(r Record) bool { return len(r.Links) == 0 }); !slices.Equal(got, []string{"test-cluster"}) {
		t.Errorf("Where(no links) = %v", got)
	}
}
