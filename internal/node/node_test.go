package node_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/benchnet/benchnet/internal/kinds"
	"github.com/benchnet/benchnet/internal/kinds/cometbft"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Every kind a manifest may name has a driver, built with the testnet's
// options; an unknown kind is an error that names the known ones.
func TestNew(t *testing.T) {
	if got := node.Kinds(); !slices.Equal(got, manifest.Kinds()) {
		t.Errorf("registered kinds %v, manifest kinds %v", got, manifest.Kinds())
	}
	c := node.Config{ReadyHeight: 7, Executable: "/x/benchnet"}
	for _, tc := range []struct {
		kind    string
		check   func(node.Driver) bool
		wantErr string
	}{
		{kind: manifest.KindCometBFT, check: func(d node.Driver) bool {
			cd, ok := d.(*cometbft.Driver)
			return ok && cd.ReadyHeight == 7 && cd.Executable == "/x/benchnet"
		}},
		{kind: spec.Name, check: func(d node.Driver) bool {
			gd, ok := d.(*gossipsub.Driver)
			return ok && gd.Executable == "/x/benchnet"
		}},
		{kind: "tendermint", wantErr: `no driver for node kind "tendermint" in this binary (have cometbft, gossipsub`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			d, err := node.New(tc.kind, c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(d) {
				t.Errorf("New(%q) = %#v, not the kind's driver with the config's values", tc.kind, d)
			}
		})
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "registered twice") {
			t.Errorf("recover() = %v, want a panic about the second registration", r)
		}
	}()
	node.Register(manifest.KindCometBFT, func(node.Config) node.Driver { return nil })
}

// ProcessNames are what the testnet stops, kills and pauses, node first:
// the reverse of the driver's start order.
func TestProcessNames(t *testing.T) {
	dir, err := rundir.Create(t.TempDir(), "names", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env := node.Env{Dir: dir, Homes: dir.Join(rundir.Homes)}
	rel := release.Release{Name: "cometbft", Version: "v1.0.1"}
	for _, tc := range []struct {
		name string
		d    node.Driver
		n    *plan.Node
		want []string
		logs []string // the processes' logs, in start order
	}{
		{"cometbft in-process kvstore", &cometbft.Driver{}, &plan.Node{Name: "v0", Release: rel, App: "kvstore"},
			[]string{"node"}, []string{"v0.log"}},
		{"cometbft socket kvstore", &cometbft.Driver{}, &plan.Node{Name: "v1", Release: rel, App: "kvstore-socket"},
			[]string{"node", "app"}, []string{"v1-app.log", "v1.log"}},
		{"cometbft accounts app", &cometbft.Driver{}, &plan.Node{Name: "v2", Release: rel, App: cometbft.AccountsApp},
			[]string{"node", "app"}, []string{"v2-app.log", "v2.log"}},
		{"gossipsub host", &gossipsub.Driver{}, &plan.Node{Name: "g0", Release: spec.Release},
			[]string{"node"}, []string{"g0.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := node.ProcessNames(tc.d, tc.n, nil, env); !slices.Equal(got, tc.want) {
				t.Errorf("ProcessNames = %q, want %q", got, tc.want)
			}
			var logs []string
			for _, p := range tc.d.Processes(tc.n, nil, env) {
				if p.Node != tc.n.Name {
					t.Errorf("process %s is on node %q, want %q", p.Name, p.Node, tc.n.Name)
				}
				if filepath.Dir(p.LogPath) != dir.Join(rundir.Logs) {
					t.Errorf("process %s logs to %s, outside %s", p.Name, p.LogPath, dir.Join(rundir.Logs))
				}
				logs = append(logs, filepath.Base(p.LogPath))
			}
			if !slices.Equal(logs, tc.logs) {
				t.Errorf("logs = %q, want %q", logs, tc.logs)
			}
		})
	}
}

// A gossipsub host has nothing to reset: the driver says so in a way
// callers can test for, naming the kind.
func TestGossipsubResetNotSupported(t *testing.T) {
	dir, err := rundir.Create(t.TempDir(), "reset", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = (&gossipsub.Driver{}).Reset(context.Background(), &plan.Node{Name: "g1"}, nil, node.Env{Dir: dir, Homes: dir.Join(rundir.Homes)})
	if !errors.Is(err, node.ErrNotSupported) || !strings.Contains(err.Error(), "not supported for gossipsub hosts") {
		t.Errorf("Reset = %v, want ErrNotSupported for gossipsub hosts", err)
	}
}
