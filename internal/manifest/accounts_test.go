package manifest

import "testing"

const accountsBase = "[node.validator]\ncount = 2\napp = \"accounts\"\n"

func TestAccountsErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{"ABCI 1.0 release", "[node.validator]\ncount = 1\nrelease = \"cometbft@v0.37.5\"\napp = \"accounts\"\n",
			[]string{"bad.toml:4: node.validator.app: \"accounts\" is an ABCI 2.0 app", "cometbft@v0.37.5"}},
		{"v0.34 release", "[node.validator]\ncount = 1\nrelease = \"cometbft@v0.34.35\"\napp = \"accounts\"\n",
			[]string{"bad.toml:4: node.validator.app: \"accounts\" is an ABCI 2.0 app"}},
		{"app_mempool without accounts", "[node.validator]\ncount = 1\napp_mempool = true\n",
			[]string{"bad.toml:3: node.validator.app_mempool: only the \"accounts\" app"}},
		{"app db backend", accountsBase + "[node.validator.config]\n\"db_backend\" = \"badgerdb\"\n",
			[]string{"bad.toml:5: node.validator.config.db_backend: badgerdb: the accounts app"}},
		{"workload on kvstore", "[node.validator]\ncount = 1\n[load]\nworkload = \"accounts\"\n",
			[]string{"bad.toml:4: load.workload: \"accounts\" needs app = \"accounts\" on every node it may reach: [node.validator] runs \"kvstore\""}},
		{"workload on kvstore-socket", "[node.validator]\ncount = 1\napp = \"kvstore-socket\"\n[load]\nworkload = \"accounts\"\n",
			[]string{"bad.toml:3: node.validator.app: \"kvstore-socket\": the accounts workload needs app = \"accounts\""}},
		{"unknown workload", accountsBase + "[load]\nworkload = \"evm\"\n",
			[]string{"bad.toml:5: load.workload: \"evm\""}},
		{"accounts fields on kv", accountsBase + "[load]\naccounts = 3\norder = \"sequential\"\n",
			[]string{"bad.toml:5: load.accounts: only the \"accounts\" workload", "bad.toml:6: load.order: only"}},
		{"bad order", accountsBase + "[load]\nworkload = \"accounts\"\norder = \"random\"\n",
			[]string{"bad.toml:6: load.order: \"random\""}},
		{"out-of-order too short", accountsBase + "[load]\nworkload = \"accounts\"\norder = \"out-of-order\"\ntxs_per_account = 2\n",
			[]string{"bad.toml:6: load.order: \"out-of-order\" sends [seq+2, seq, seq+1] first"}},
		{"accounts range", accountsBase + "[load]\nworkload = \"accounts\"\naccounts = -1\nwrite_keys = 5000\n",
			[]string{"bad.toml:6: load.accounts: must be 1 to", "bad.toml:7: load.write_keys: must be 0"}},
		{"too many txs", accountsBase + "[load]\nworkload = \"accounts\"\naccounts = 1000\ntxs_per_account = 100000\n",
			[]string{"bad.toml:7: load.txs_per_account: accounts × txs_per_account = 100000000"}},
		{"count", accountsBase + "[load]\nworkload = \"accounts\"\ncount = 10\n",
			[]string{"bad.toml:6: load.count: the accounts workload sends accounts × txs_per_account"}},
		{"http", accountsBase + "[load]\nworkload = \"accounts\"\ntransport = \"http\"\n",
			[]string{"bad.toml:6: load.transport: \"http\": the accounts workload needs \"websocket\""}},
		{"unknown target node", accountsBase + "[load]\nworkload = \"accounts\"\ntarget = \"validator7\"\n",
			[]string{"bad.toml:6: load.target: \"validator7\" is not a validator or full node", "validator0, validator1"}},
		{"kv target", accountsBase + "[load]\nworkload = \"accounts\"\ntarget = \"all\"\n",
			[]string{"load.target: \"all\" is not a validator or full node"}},
	})
}

func TestAccountsDefaults(t *testing.T) {
	m, err := Parse("ok.toml", []byte(accountsBase+"[node.full]\ncount = 1\napp = \"accounts\"\napp_mempool = true\n[load]\nworkload = \"accounts\"\ntarget = \"full0\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := m.Load
	if l.Accounts != DefaultAccounts || l.TxsPerAccount != DefaultTxsPerAccount || l.Order != "sequential" || l.Method != "sync" || l.Target != "full0" {
		t.Errorf("defaults: %+v", l)
	}
	m, err = Parse("ok.toml", []byte(accountsBase+"[load]\nworkload = \"accounts\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Load.Target != TargetAllNodes {
		t.Errorf("target %q, want %q", m.Load.Target, TargetAllNodes)
	}
	m, err = Parse("ok.toml", []byte("[node.validator]\ncount = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Load.Workload != "" || m.Load.Method != DefaultMethod || m.Load.Target != DefaultTarget {
		t.Errorf("a kv manifest changed: %+v", m.Load)
	}
}
