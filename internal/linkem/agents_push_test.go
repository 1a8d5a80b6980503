package linkem

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tableAgent is a link agent's control port (PUT /links) as the harness
// sees it: it keeps the table put, or refuses the puts refuse picks (by
// their number, from 1) with the agent's kind of message, or hangs.
type tableAgent struct {
	mu     sync.Mutex
	table  AgentTable
	puts   int
	refuse func(n int) bool
	hang   bool
	done   chan struct{}
	srv    *httptest.Server
}

func newTableAgent(t *testing.T) *tableAgent {
	f := &tableAgent{done: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/links" {
			http.Error(w, "not the control port", http.StatusNotFound)
			return
		}
		f.mu.Lock()
		f.puts++
		n, refuse, hang := f.puts, f.refuse, f.hang
		f.mu.Unlock()
		if hang { // until the pusher gives up, or the test ends
			select {
			case <-r.Context().Done():
			case <-f.done:
			}
			return
		}
		if refuse != nil && refuse(n) {
			http.Error(w, "linkem-agent: injected refusal", http.StatusUnprocessableEntity)
			return
		}
		var tb AgentTable
		if err := json.NewDecoder(r.Body).Decode(&tb); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.table = tb
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(tb)
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.done) }) // first: Close waits for the handlers
	return f
}

func (f *tableAgent) state() (AgentTable, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.table, f.puts
}

// agentsLab is three nodes, a 10 ms link everywhere, a and b running
// under (fake) agents that hold the tables they started with, c not
// started.
type agentsLab struct {
	m      *Model
	be     *Agents
	agents map[string]*tableAgent
}

func newAgentsLab(t *testing.T) *agentsLab {
	l := &agentsLab{agents: map[string]*tableAgent{"a": newTableAgent(t), "b": newTableAgent(t)}}
	var err error
	l.m, err = New([]Endpoint{{Name: "a"}, {Name: "b"}, {Name: "c"}}, nil, func(_, _ Endpoint) Link { return Link{Delay: 10 * time.Millisecond} }, 1)
	if err != nil {
		t.Fatal(err)
	}
	l.be = NewAgents(AgentsConfig{Capture: netip.MustParsePrefix("10.0.0.0/24"), Endpoint: func(n string) string {
		if f := l.agents[n]; f != nil {
			return strings.TrimPrefix(f.srv.URL, "http://")
		}
		return ""
	}})
	t.Cleanup(func() { _ = l.be.Close() })
	if err := l.be.Apply(context.Background(), l.m); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		args, err := l.be.Args(n)
		if err != nil {
			t.Fatal(err)
		}
		l.agents[n].table = tableOfArgs(args)
	}
	return l
}

// tableOfArgs is the table an agent takes from its argv.
func tableOfArgs(args []string) AgentTable {
	t := AgentTable{Links: []string{}}
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "--ingress" { // a flag without a value
			i--
			continue
		}
		switch args[i] {
		case "--link":
			t.Links = append(t.Links, args[i+1])
		case "--rate":
			t.Rate = args[i+1]
		}
	}
	return t
}

var (
	tableA0   = AgentTable{Links: []string{"b=b,delay=10ms", "c=c,delay=10ms"}}
	tableB0   = AgentTable{Links: []string{"a=a,delay=10ms", "c=c,delay=10ms"}}
	tableACut = AgentTable{Links: []string{"b=b,delay=10ms,loss=100%", "c=c,delay=10ms"}}
	tableBCut = AgentTable{Links: []string{"a=a,delay=10ms,loss=100%", "c=c,delay=10ms"}}
)

// TestAgentsApplyPushes: a partition, a SetLink and a heal mid-run reach
// the running agents' control ports (the agents hold arriving packets, so
// a link c→a is a's to emulate); a node not started takes the
// current table when it starts; an unchanged model pushes nothing.
func TestAgentsApplyPushes(t *testing.T) {
	ctx := context.Background()
	l := newAgentsLab(t)
	for _, step := range []struct {
		name   string
		change func() error
		a, b   AgentTable
		putsA  int // so far
		putsB  int
	}{
		{"nothing changed", func() error { return nil }, tableA0, tableB0, 0, 0},
		{"partition a|b", func() error { return l.m.Partition([]string{"a"}, []string{"b"}) }, tableACut, tableBCut, 1, 1},
		{"set link c→a (b unchanged)", func() error { return l.m.SetLink("c", "a", Link{Delay: 40 * time.Millisecond}) },
			AgentTable{Links: []string{"b=b,delay=10ms,loss=100%", "c=c,delay=40ms"}}, tableBCut, 2, 1},
		{"heal", func() error { l.m.Heal(); return nil }, tableA0, tableB0, 3, 2},
		{"cut c→a", func() error { return l.m.SetLink("c", "a", Link{Loss: 1}) }, AgentTable{Links: []string{"b=b,delay=10ms", "c=c,loss=100%"}}, tableB0, 4, 2},
	} {
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		if err := l.be.Apply(ctx, l.m); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		gotA, putsA := l.agents["a"].state()
		gotB, putsB := l.agents["b"].state()
		if !sameTable(gotA, step.a) || !sameTable(gotB, step.b) {
			t.Errorf("%s: agents hold\n a %v\n b %v\nwant\n a %v\n b %v", step.name, gotA, gotB, step.a, step.b)
		}
		if putsA != step.putsA || putsB != step.putsB {
			t.Errorf("%s: %d and %d puts to a and b, want %d and %d", step.name, putsA, putsB, step.putsA, step.putsB)
		}
	}
	// c starts now: its argv carries the model in force (a→c, b→c
	// untouched).
	args, err := l.be.Args("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := tableOfArgs(args); !sameTable(got, AgentTable{Links: []string{"a=a,delay=10ms", "b=b,delay=10ms"}}) {
		t.Errorf("c starts with %v", got)
	}
}

func sameTable(x, y AgentTable) bool { return x.Rate == y.Rate && slices.Equal(x.Links, y.Links) }

// TestAgentsApplyAllOrNothing: when one agent refuses or does not answer,
// the ones already changed get their old table back, the error names the
// node and carries the agent's message, and the backend keeps the old
// conditions (an Apply of the restored model pushes nothing). When the
// rollback fails too, the error says which agents are left mixed.
func TestAgentsApplyAllOrNothing(t *testing.T) {
	defer func(d time.Duration) { agentPushTimeout = d }(agentPushTimeout)
	agentPushTimeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name         string
		breakB       func(f *tableAgent)
		failRollback bool
		want         []string // in the error
		aPuts        int      // the new table, then the old one back
	}{
		{"b refuses", func(f *tableAgent) { f.refuse = func(int) bool { return true } }, false,
			[]string{"push links to b", "422", "injected refusal"}, 2},
		{"b hangs", func(f *tableAgent) { f.hang = true }, false,
			[]string{"push links to b", "deadline exceeded"}, 2},
		{"rollback fails", func(f *tableAgent) { f.refuse = func(int) bool { return true } }, true,
			[]string{"push links to b", "rollback failed, links are mixed (new table on: a)", "restore links of a"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := newAgentsLab(t)
			saved := l.m.Save()
			tc.breakB(l.agents["b"])
			if tc.failRollback {
				l.agents["a"].refuse = func(n int) bool { return n == 2 }
			}
			if err := l.m.Partition([]string{"a"}, []string{"b"}); err != nil {
				t.Fatal(err)
			}
			err := l.be.Apply(ctx, l.m)
			if err == nil {
				t.Fatal("Apply succeeded though agent b failed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q: %v", w, err)
				}
			}
			if errors.Is(err, ErrRolledBack) == tc.failRollback {
				t.Errorf("ErrRolledBack %v, want %v: %v", errors.Is(err, ErrRolledBack), !tc.failRollback, err)
			}
			gotA, putsA := l.agents["a"].state()
			if putsA != tc.aPuts {
				t.Errorf("%d puts to a, want %d", putsA, tc.aPuts)
			}
			if want := tableA0; tc.failRollback {
				if !sameTable(gotA, tableACut) {
					t.Errorf("a holds %v after a refused rollback, want the new %v", gotA, tableACut)
				}
			} else if !sameTable(gotA, want) {
				t.Errorf("a holds %v after the rollback, want %v", gotA, want)
			}
			// The caller restores the model (testnet.applyLinks): nothing to push.
			l.m.Restore(saved)
			if err := l.be.Apply(ctx, l.m); err != nil {
				t.Errorf("Apply of the conditions last applied: %v", err)
			}
			if _, n := l.agents["a"].state(); n != tc.aPuts {
				t.Errorf("Apply of the conditions last applied pushed to a (%d puts)", n)
			}
		})
	}
}

// A node that took its table but runs no agent now is skipped; it takes
// its table again when it starts.
func TestAgentsApplySkipsStopped(t *testing.T) {
	l := newAgentsLab(t)
	b := l.agents["b"]
	delete(l.agents, "b") // stopped: no endpoint
	if err := l.m.Partition([]string{"a"}, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if err := l.be.Apply(context.Background(), l.m); err != nil {
		t.Fatal(err)
	}
	if _, n := b.state(); n != 0 {
		t.Errorf("a stopped node's agent got %d puts", n)
	}
	if got, _ := l.agents["a"].state(); !sameTable(got, tableACut) {
		t.Errorf("a holds %v, want %v", got, tableACut)
	}
}
