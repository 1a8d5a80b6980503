package linkem

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeTC keeps, per namespace, the tc commands in force: "qdisc del … root"
// clears a namespace, any other command adds itself. fail decides which
// command errors, so an Apply can be broken half-way.
type fakeTC struct {
	rules map[string][]string
	fail  func(ns, cmd string) bool
}

func (f *fakeTC) exec(_ context.Context, argv []string) error {
	ns, cmd := argv[3], strings.Join(argv[4:], " ")
	if f.fail != nil && f.fail(ns, cmd) {
		return errors.New("tc: injected failure")
	}
	if strings.HasPrefix(cmd, "tc qdisc del ") {
		if len(f.rules[ns]) == 0 {
			return errors.New("tc: no root qdisc") // as tc says on an empty device
		}
		delete(f.rules, ns)
		return nil
	}
	f.rules[ns] = append(f.rules[ns], cmd)
	return nil
}

func (f *fakeTC) clone() map[string][]string {
	out := map[string][]string{}
	for k, v := range f.rules {
		out[k] = slices.Clone(v)
	}
	return out
}

// TestNetemApplyAllOrNothing breaks a partition half-way (the second changed
// node's rules fail) and checks that every node is back on its previous
// rules, the error says so, and a later Apply of the unchanged model is a
// no-op (the backend's record matches the devices). When the rollback fails
// too, the error names the nodes left unshaped.
func TestNetemApplyAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name         string
		failRollback bool
	}{
		{"rollback works", false},
		{"rollback fails", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := &fakeTC{rules: map[string][]string{}}
			n := NewNetem(NetemConfig{Netns: nsOf, Exec: f.exec})
			m := threeZoneModel(t)
			if err := n.Apply(ctx, m); err != nil {
				t.Fatal(err)
			}
			before := f.clone()
			saved := m.Save()

			if err := m.Partition([]string{"validator1"}, []string{"validator2"}); err != nil {
				t.Fatal(err)
			}
			// validator1 is replaced first and succeeds; validator2 fails
			// mid-way, which starts the rollback (failRollback: that fails too).
			rollingBack := false
			f.fail = func(ns, cmd string) bool {
				if !rollingBack {
					rollingBack = ns == "bn-validator2" && strings.Contains(cmd, "netem")
					return rollingBack
				}
				return tc.failRollback && ns == "bn-validator1" && strings.Contains(cmd, "class add")
			}
			err := n.Apply(ctx, m)
			if err == nil {
				t.Fatal("Apply succeeded through an injected tc failure")
			}
			if tc.failRollback {
				if errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), "validator1") || !strings.Contains(err.Error(), "mixed") {
					t.Errorf("error should say the rollback failed and name validator1: %v", err)
				}
				if len(f.rules["bn-validator1"]) != 0 {
					t.Errorf("validator1 left with partial rules after a failed rollback: %q", f.rules["bn-validator1"])
				}
				return
			}
			if !errors.Is(err, ErrRolledBack) {
				t.Errorf("error does not report the rollback: %v", err)
			}
			if got := f.clone(); !mapsEqual(got, before) {
				t.Errorf("links after a failed apply differ from before:\n got  %q\n want %q", got, before)
			}
			// Model back to what was applied: Apply has nothing to do.
			m.Restore(saved)
			f.fail = func(ns, cmd string) bool { t.Errorf("unexpected command after rollback: %s %s", ns, cmd); return false }
			if err := n.Apply(ctx, m); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mapsEqual(a, b map[string][]string) bool {
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

// TestPartitionBadNameChangesNothing: a partition naming an unknown node
// fails before any pair is cut, and a later publish does not cut them.
func TestPartitionBadNameChangesNothing(t *testing.T) {
	m := threeZoneModel(t)
	before := m.Snapshot()
	if err := m.Partition([]string{"validator0"}, []string{"validator1", "ghost"}); err == nil {
		t.Fatal("partition with an unknown node succeeded")
	}
	if err := m.SetRate("validator3", 0); err != nil { // publishes the model again
		t.Fatal(err)
	}
	after := m.Snapshot()
	for i := range before.Links {
		if !slices.Equal(before.Links[i], after.Links[i]) {
			t.Errorf("links of %s changed by a refused partition: %v -> %v", before.Nodes[i].Name, before.Links[i], after.Links[i])
		}
	}
}
