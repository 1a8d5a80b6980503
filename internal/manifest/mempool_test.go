package manifest

import "testing"

const appMempoolBase = "[node.validator]\ncount = 2\nrelease = \"cometbft@v0.40.0\"\napp = \"accounts\"\nmempool = \"app\"\n"

func TestMempoolErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{"unknown", "[node.validator]\ncount = 1\nmempool = \"priority\"\n",
			[]string{"bad.toml:3: node.validator.mempool: \"priority\": want \"flood\" (the default) or \"app\""}},
		{"v1.0.1 has none", "[node.validator]\ncount = 1\nrelease = \"cometbft@v1.0.1\"\napp = \"accounts\"\nmempool = \"app\"\n",
			[]string{"bad.toml:5: node.validator.mempool: cometbft@v1.0.1 has no app-side mempool: [mempool] type = \"app\" came with cometbft v0.40.0"}},
		{"v0.38 has none", "[node.validator]\ncount = 1\nrelease = \"cometbft@v0.38.17\"\napp = \"accounts\"\nmempool = \"app\"\n",
			[]string{"bad.toml:5: node.validator.mempool: cometbft@v0.38.17 has no app-side mempool"}},
		{"kvstore cannot keep it", "[node.validator]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\nmempool = \"app\"\n",
			[]string{"bad.toml:4: node.validator.mempool: \"app\" keeps the txs in the app, which must implement InsertTx and ReapTxs: only app = \"accounts\" does"}},
		{"both ways", appMempoolBase + "[node.validator.config]\n\"mempool.type\" = \"app\"\n",
			[]string{"bad.toml:5: node.validator.mempool: set both mempool and config \"mempool.type\""}},
	})
	for _, ok := range []string{
		appMempoolBase,
		appMempoolBase + "[node.full]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\napp = \"accounts\"\n", // a flood node beside them
		"[node.validator]\ncount = 1\nmempool = \"flood\"\n",
	} {
		if _, err := Parse("ok.toml", []byte(ok)); err != nil {
			t.Errorf("refused:\n%s\n%v", ok, err)
		}
	}
}
