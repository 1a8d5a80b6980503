package registry

import (
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("widget")
	r.Register("b", 2)
	r.Register("a", 1)
	if v, ok := r.Get("a"); !ok || v != 1 {
		t.Errorf("Get(a) = %d, %v", v, ok)
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names = %v, want sorted [a b]", got)
	}
	if _, err := r.Lookup("c"); err == nil || err.Error() != `no widget "c" in this binary (have a, b)` {
		t.Errorf("Lookup(c): %v", err)
	}
	r.Unregister("b")
	if _, ok := r.Get("b"); ok {
		t.Error("b still registered after Unregister")
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), `widget "a" registered twice`) {
			t.Errorf("a second Register of a: panic %v", p)
		}
	}()
	r.Register("a", 3)
}
