package cometbft

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestReset runs the release's own reset through the driver on a generated
// home made to look run: the chain's and the app's stores, the address book
// and the signing state go; keys, config and genesis stay byte for byte.
func TestReset(t *testing.T) {
	for _, version := range []string{"v1.0.1", "v0.38.17"} {
		for _, app := range []string{"kvstore", "kvstore-socket", AccountsApp} {
			t.Run(version+"/"+app, func(t *testing.T) {
				rel, bin := cachedBinary(t, version)
				p := loadPlan(t, "quickstart", version)
				dir, err := rundir.Create(t.TempDir(), "reset", time.Now())
				if err != nil {
					t.Fatal(err)
				}
				env := node.Env{Dir: dir, Homes: dir.Join(rundir.Homes)}
				if err := GenerateHomes(context.Background(), p, map[release.Release]string{rel: bin}, env.Homes); err != nil {
					t.Fatal(err)
				}
				n := p.Nodes[1]
				n.App = app
				home := filepath.Join(env.Homes, n.Name)
				kept := map[string][]byte{}
				for _, f := range []string{"config/genesis.json", "config/config.toml", "config/node_key.json", "config/priv_validator_key.json"} {
					kept[f] = readFile(t, filepath.Join(home, f))
				}
				// What a node that ran leaves behind.
				gone := []string{"data/blockstore.db/000001.log", "data/state.db/000001.log", "data/cs.wal/wal", "config/addrbook.json",
					filepath.Join("data", "app", "store", "000001.log")}
				for _, f := range gone {
					writeFile(t, filepath.Join(home, f), `x`)
				}
				writeFile(t, filepath.Join(home, "data", "priv_validator_state.json"), `{"height":"42","round":1,"step":3}`)

				d := &Driver{}
				if err := d.Reset(context.Background(), n, []node.Binary{{Release: rel, Program: "cometbft", Path: bin}}, env); err != nil {
					t.Fatal(err)
				}
				for f, want := range kept {
					if got := readFile(t, filepath.Join(home, f)); !bytes.Equal(got, want) {
						t.Errorf("%s changed by the reset", f)
					}
				}
				for _, f := range gone {
					if _, err := os.Stat(filepath.Join(home, f)); !os.IsNotExist(err) {
						t.Errorf("%s still there after the reset (stat: %v)", f, err)
					}
				}
				if _, err := os.Stat(AppDataDir(home)); !os.IsNotExist(err) {
					t.Errorf("app store %s still there (stat: %v)", AppDataDir(home), err)
				}
				var st struct {
					Height string `json:"height"`
					Round  int    `json:"round"`
					Step   int    `json:"step"`
				}
				if err := json.Unmarshal(readFile(t, filepath.Join(home, "data", "priv_validator_state.json")), &st); err != nil {
					t.Fatal(err)
				}
				if st.Height != "0" || st.Round != 0 || st.Step != 0 {
					t.Errorf("signing state after the reset = %+v, want height 0 round 0 step 0", st)
				}
				// Another node's home is untouched.
				other := filepath.Join(env.Homes, p.Nodes[0].Name, "data", "priv_validator_state.json")
				if _, err := os.Stat(other); err != nil {
					t.Errorf("other node's home: %v", err)
				}
			})
		}
	}
}

// TestResetErrors: the reset refuses, with its reason, what it cannot do,
// and creates no home where there was none.
func TestResetErrors(t *testing.T) {
	rel, bin := cachedBinary(t, "v1.0.1")
	p := loadPlan(t, "quickstart", "v1.0.1")
	dir, err := rundir.Create(t.TempDir(), "reset", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env := node.Env{Dir: dir, Homes: dir.Join(rundir.Homes)}
	bins := []node.Binary{{Release: rel, Program: "cometbft", Path: bin}}
	other := release.Release{Name: "cometbft", Version: "v0.37.15"}
	for _, tc := range []struct {
		name    string
		rel     release.Release
		bins    []node.Binary
		wantErr string
	}{
		{"no binary of the release", other, bins, "no cometbft binary of cometbft@v0.37.15"},
		{"no binaries", rel, nil, "no cometbft binary"},
		{"home not generated", rel, bins, "not a generated home"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := *p.Nodes[0]
			n.Release = tc.rel
			err := (&Driver{}).Reset(context.Background(), &n, tc.bins, env)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(env.Homes, n.Name)); !os.IsNotExist(err) {
				t.Errorf("a failed reset left a home behind (stat: %v)", err)
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
