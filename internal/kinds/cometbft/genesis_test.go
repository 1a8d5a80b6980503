package cometbft

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// The genesis.json of `cometbft init` of each release (testdata).
func TestPatchGenesis(t *testing.T) {
	tests := []struct {
		release string
		set     map[string]any
		want    map[string]any // dotted key -> JSON value after the patch
		err     string
	}{
		{"v1.0.1", map[string]any{"consensus_params.block.max_bytes": int64(1048576), "consensus_params.feature.pbts_enable_height": int64(1)},
			map[string]any{"consensus_params.block.max_bytes": "1048576", "consensus_params.feature.pbts_enable_height": "1"}, ""},
		{"v0.38.17", map[string]any{"consensus_params.block.max_bytes": int64(4194304), "consensus_params.abci.vote_extensions_enable_height": "5"},
			map[string]any{"consensus_params.block.max_bytes": "4194304", "consensus_params.abci.vote_extensions_enable_height": "5"}, ""},
		{"v0.34.35", map[string]any{"consensus_params.block.time_iota_ms": int64(10)},
			map[string]any{"consensus_params.block.time_iota_ms": "10"}, ""},
		{"v0.38.17", map[string]any{"consensus_params.feature.pbts_enable_height": int64(1)}, nil,
			`genesis key "consensus_params.feature.pbts_enable_height" is not in this release's genesis.json: PBTS exists from v1.0 on`},
		// v0.39/v0.40 continue the v0.38 line: ABCI vote extensions, an
		// authority param, no PBTS.
		{"v0.40.0", map[string]any{"consensus_params.block.max_bytes": int64(4194304), "consensus_params.abci.vote_extensions_enable_height": "5", "consensus_params.authority.authority": "x"},
			map[string]any{"consensus_params.block.max_bytes": "4194304", "consensus_params.abci.vote_extensions_enable_height": "5", "consensus_params.authority.authority": "x"}, ""},
		{"v0.39.4", map[string]any{"consensus_params.feature.pbts_enable_height": int64(1)}, nil,
			`genesis key "consensus_params.feature.pbts_enable_height" is not in this release's genesis.json: PBTS exists from v1.0 on`},
		{"v1.0.1", map[string]any{"consensus_params.block.max_byte": int64(1)}, nil,
			`"consensus_params.block.max_byte" is not in this release's genesis.json`},
		{"v1.0.1", map[string]any{"consensus_params.block.max_bytes": 1.5}, nil, "the release writes an integer here"},
		{"v1.0.1", map[string]any{"consensus_params.block.max_bytes": true}, nil, "does not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.release+" "+strings.Join(keysOf(tt.set), ","), func(t *testing.T) {
			in, err := os.ReadFile("testdata/genesis-" + tt.release + ".json")
			if err != nil {
				t.Fatal(err)
			}
			out, err := PatchGenesis(in, tt.set, "cometbft@"+tt.release)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				var uk *UnknownKeyError
				if strings.Contains(tt.err, "is not in") && !errors.As(err, &uk) {
					t.Errorf("not an UnknownKeyError: %T", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := lookup(doc, k); got != want {
					t.Errorf("%s = %v (%T), want %v", k, got, got, want)
				}
			}
			// Everything else is the release's.
			var orig map[string]any
			_ = json.Unmarshal(in, &orig)
			if lookup(doc, "chain_id") != lookup(orig, "chain_id") || lookup(doc, "consensus_params.evidence.max_bytes") != lookup(orig, "consensus_params.evidence.max_bytes") {
				t.Error("other keys changed")
			}
		})
	}
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func lookup(doc map[string]any, key string) any {
	var cur any = doc
	for _, p := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
