package cometbft

import (
	"reflect"
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
)

func TestAccountsAppArgv(t *testing.T) {
	v1 := plan.Release{Name: "cometbft", Version: "v1.0.1"}
	v038 := plan.Release{Name: "cometbft", Version: "v0.38.17"}
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
