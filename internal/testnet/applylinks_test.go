package testnet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
)

// halfBackend installs a snapshot node by node and can fail after some
// nodes: the worst kind of backend, which leaves links mixed by itself, so
// only ApplyLinks' rollback can put them back.
type halfBackend struct {
	links     map[string][]linkem.Link // node → its row as installed
	failAfter int                      // fail once this many nodes are installed (-1: never)
	failCalls int                      // how many of the next Apply calls fail (-1: all)
}

func (*halfBackend) Name() string { return "half" }
func (*halfBackend) Close() error { return nil }

func (b *halfBackend) Apply(_ context.Context, m *linkem.Model) error {
	s := m.Snapshot()
	for i, n := range s.Nodes {
		if b.failCalls != 0 && i == b.failAfter {
			if b.failCalls > 0 {
				b.failCalls--
			}
			return fmt.Errorf("node %s: injected failure", n.Name)
		}
		b.links[n.Name] = slices.Clone(s.Links[i])
	}
	return nil
}

func (b *halfBackend) rows() map[string][]linkem.Link {
	out := map[string][]linkem.Link{}
	for k, v := range b.links {
		out[k] = slices.Clone(v)
	}
	return out
}

func sameRows(a, b map[string][]linkem.Link) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func threeNodeModel(t *testing.T) *linkem.Model {
	t.Helper()
	var eps []linkem.Endpoint
	for i := range 3 {
		eps = append(eps, linkem.Endpoint{Name: fmt.Sprintf("v%d", i), Addr: netip.AddrFrom4([4]byte{10, 0, 0, byte(2 + i)})})
	}
	m, err := linkem.New(eps, nil, func(_, _ linkem.Endpoint) linkem.Link { return linkem.Link{Delay: 10 * time.Millisecond} }, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestApplyLinksAllOrNothing partitions v0 from v1 and v2 through a backend
// that fails after the first node: the model and every installed link must
// be back where they were, and the error must say so (or, when the rollback
// fails too, say that links may be mixed). A change that works afterwards
// goes through.
func TestApplyLinksAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failCalls  int // Apply calls that fail after the first, good one
		rolledBack bool
	}{
		{"backend fails once", 1, true},
		{"rollback fails too", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			be := &halfBackend{links: map[string][]linkem.Link{}, failAfter: -1}
			m := threeNodeModel(t)
			tn := &Testnet{links: be, model: m}
			if err := tn.ApplyLinks(ctx); err != nil {
				t.Fatal(err)
			}
			before, snapBefore := be.rows(), m.Snapshot()

			if err := m.Partition([]string{"v0"}, []string{"v1", "v2"}); err != nil {
				t.Fatal(err)
			}
			be.failAfter, be.failCalls = 1, tc.failCalls
			err := tn.ApplyLinks(ctx)
			if err == nil {
				t.Fatal("ApplyLinks succeeded through a failing backend")
			}
			if got := errors.Is(err, linkem.ErrRolledBack); got != tc.rolledBack {
				t.Errorf("errors.Is(err, ErrLinksRolledBack) = %v, want %v: %v", got, tc.rolledBack, err)
			}
			if !tc.rolledBack {
				if !strings.Contains(err.Error(), "mixed") {
					t.Errorf("a failed rollback should warn that links may be mixed: %v", err)
				}
				return
			}
			if got := be.rows(); !sameRows(got, before) {
				t.Errorf("installed links after a failed apply:\n got  %v\n want %v", got, before)
			}
			for i := range snapBefore.Links {
				if got := m.Snapshot().Links[i]; !slices.Equal(got, snapBefore.Links[i]) {
					t.Errorf("model row %d after rollback %v, want %v", i, got, snapBefore.Links[i])
				}
			}

			// The same change through a working backend is applied in full.
			be.failAfter = -1
			if err := m.Partition([]string{"v0"}, []string{"v1", "v2"}); err != nil {
				t.Fatal(err)
			}
			if err := tn.ApplyLinks(ctx); err != nil {
				t.Fatal(err)
			}
			if l := be.links["v1"][0]; l.Loss != 1 {
				t.Errorf("v1→v0 after a successful partition: %v, want loss 1", l)
			}
			if l := be.links["v1"][2]; l.Loss != 0 {
				t.Errorf("v1→v2 cut by a partition of v0 only: %v", l)
			}
		})
	}
}
