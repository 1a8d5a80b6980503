package cometbft

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
)

func TestAccountsAppArgv(t *testing.T) {
	v1 := release.Release{Name: "cometbft", Version: "v1.0.1"}
	v038 := release.Release{Name: "cometbft", Version: "v0.38.17"}
	v040 := release.Release{Name: "cometbft", Version: "v0.40.0"}
	for _, tc := range []struct {
		name string
		n    plan.Node
		want []string
	}{
		{"v1 default store", plan.Node{Release: v1, App: AccountsApp},
			[]string{"/r/bin/benchnet-app", "node", "accounts-app", "--addr", AppAddr, "--dir", "/h/v0/data/app", "--db-backend", "pebbledb"}},
		{"v0.38 default store, queue", plan.Node{Release: v038, App: AccountsApp, AppMempool: true},
			[]string{"/r/bin/benchnet-app", "node", "accounts-app", "--addr", AppAddr, "--dir", "/h/v0/data/app", "--db-backend", "goleveldb", "--app-mempool"}},
		{"node's db_backend", plan.Node{Release: v1, App: AccountsApp, Config: map[string]any{"db_backend": "goleveldb"}},
			[]string{"/r/bin/benchnet-app", "node", "accounts-app", "--addr", AppAddr, "--dir", "/h/v0/data/app", "--db-backend", "goleveldb"}},
		{"v0.40 app-side mempool", plan.Node{Release: v040, App: AccountsApp, Mempool: "app"},
			[]string{"/r/bin/benchnet-app", "node", "accounts-app", "--addr", AppAddr, "--dir", "/h/v0/data/app", "--db-backend", "goleveldb", "--abci-mempool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AccountsAppArgv(appBinPath("/r"), "/h/v0", &tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("argv %q\n want %q", got, tc.want)
			}
			if !HasAppProcess(&tc.n) {
				t.Error("no app process")
			}
		})
	}
	if HasAppProcess(&plan.Node{App: "kvstore"}) {
		t.Error("in-process kvstore has an app process")
	}
}

// TestAppMempoolSettings: mempool = "app" writes [mempool] type = "app"
// into v0.40.0's own config.toml; a flood node's config keeps the
// release's type.
func TestAppMempoolSettings(t *testing.T) {
	pristine, err := os.ReadFile(filepath.Join("testdata", "v0.40.0", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p := loadPlan(t, "libp2p", "v0.40.0")
	ids := map[string]string{}
	for i, m := range p.Nodes {
		ids[m.Name] = fmt.Sprintf("12D3KooWPeer%d", i)
	}
	for _, mempool := range []string{"app", ""} {
		n := *p.Node("validator0")
		n.App, n.Mempool = AccountsApp, mempool
		set, err := Settings(p, &n, ids)
		if err != nil {
			t.Fatal(err)
		}
		got, err := PatchConfig(pristine, set, n.Release.String())
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Mempool struct {
				Type string `toml:"type"`
			} `toml:"mempool"`
		}
		if err := toml.Unmarshal(got, &c); err != nil {
			t.Fatal(err)
		}
		want := "flood"
		if mempool == "app" {
			want = "app"
		}
		if c.Mempool.Type != want {
			t.Errorf("mempool %q: config.toml's mempool.type %q, want %q", mempool, c.Mempool.Type, want)
		}
	}
}
