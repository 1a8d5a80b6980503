package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	m, err := Parse("ok.toml", []byte(`
name = "qs"
seed = 3
[node.validator]
count = 4
[node.validator.config]
"mempool.size" = 10000
"consensus.timeout_commit" = "500ms"
[node.full]
count = 2
zones = ["a", "b"]
start_delay = "2s"
[load]
rate = 50
duration = "10s"
`))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", m.Name, "qs"},
		{"seed", m.Seed, int64(3)},
		{"subnet default", m.Network.Subnet, DefaultSubnet},
		{"topology default", m.Network.Topology, "full"},
		{"validator role from group name", m.Node["validator"].Role, "validator"},
		{"full role from group name", m.Node["full"].Role, "full"},
		{"release default", m.Node["validator"].Release, DefaultRelease},
		{"app default", m.Node["validator"].App, "kvstore"},
		{"zone default", m.Node["validator"].Zone, DefaultZone},
		{"zones kept", strings.Join(m.Node["full"].Zones, ","), "a,b"},
		{"start delay", m.Node["full"].StartDelay.Duration, 2 * time.Second},
		{"override int", m.Node["validator"].Config["mempool.size"], int64(10000)},
		{"override string", m.Node["validator"].Config["consensus.timeout_commit"], "500ms"},
		{"rate", m.Load.Rate, 50.0},
		{"duration", m.Load.Duration.Duration, 10 * time.Second},
		{"size default", m.Load.Size, DefaultSize},
		{"group order follows file", strings.Join(m.GroupNames(), ","), "validator,full"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v (%T), want %v (%T)", c.name, c.got, c.got, c.want, c.want)
		}
	}
}

// Every bad input names the file, the line and the field.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		toml string
		want []string // substrings, each must appear
	}{
		{"unknown key", "[node.validator]\ncount = 4\ncolour = \"red\"\n",
			[]string{"bad.toml:3: node.validator.colour: unknown key"}},
		{"unknown table", "[node.validator]\ncount = 1\n[netwrk]\nsubnet = \"10.0.0.0/24\"\n",
			[]string{"bad.toml:3: netwrk: unknown key"}},
		{"wrong type", "[node.validator]\ncount = \"four\"\n",
			[]string{"bad.toml:2: node.validator.count: cannot decode TOML string", "of type int"}},
		{"bad duration", "[node.validator]\ncount = 1\nstart_delay = \"soon\"\n",
			[]string{"bad.toml:3:", "not a duration"}},
		{"zero validators", "[node.validator]\ncount = 0\n",
			[]string{"bad.toml:2: node.validator.count: must be at least 1, got 0", "0 validators"}},
		{"no groups", "name = \"x\"\n",
			[]string{"node: the testnet has 0 validators"}},
		{"only full nodes", "[node.full]\ncount = 2\n",
			[]string{"0 validators"}},
		{"unknown release syntax", "[node.validator]\ncount = 1\nrelease = \"cometbft@latest\"\n",
			[]string{"bad.toml:3: node.validator.release: \"cometbft@latest\": want cometbft@vMAJOR.MINOR.PATCH"}},
		{"unknown release name", "[node.validator]\ncount = 1\nrelease = \"tendermint@v0.34.0\"\n",
			[]string{"node.validator.release"}},
		{"bad role", "[node.validator]\ncount = 1\n[node.x]\ncount = 1\nrole = \"miner\"\n",
			[]string{"bad.toml:5: node.x.role: \"miner\""}},
		{"bad app", "[node.validator]\ncount = 1\napp = \"evm\"\n",
			[]string{"bad.toml:3: node.validator.app"}},
		{"bad subnet", "[network]\nsubnet = \"10.1.2.3\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.subnet: \"10.1.2.3\" is not a CIDR subnet"}},
		{"subnet host bits", "[network]\nsubnet = \"10.1.2.3/24\"\n[node.validator]\ncount = 1\n",
			[]string{"network.subnet", "did you mean \"10.1.2.0/24\""}},
		{"subnet too small for nodes", "[network]\nsubnet = \"10.1.2.0/29\"\n[node.validator]\ncount = 6\n",
			[]string{"network.subnet: 10.1.2.0/29 holds 5 node addresses, the manifest has 6 nodes"}},
		{"seeds without seed", "[network]\ntopology = \"seeds\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.topology: \"seeds\" needs a group with role = \"seed\""}},
		{"zone and zones", "[node.validator]\ncount = 1\nzone = \"a\"\nzones = [\"b\"]\n",
			[]string{"bad.toml:4: node.validator.zones: set zone or zones, not both"}},
		{"loadtime size too small", "[node.validator]\ncount = 1\n[load]\nformat = \"loadtime\"\nsize = 64\n",
			[]string{"bad.toml:5: load.size: 64 bytes is too small for the \"loadtime\" payload: want at least 88"}},
		{"loadtime size odd", "[node.validator]\ncount = 1\n[load]\nformat = \"loadtime\"\nsize = 1023\n",
			[]string{"bad.toml:5: load.size: 1023: the \"loadtime\" payload is hex, so its size must be even"}},
		{"bad group name", "[node.Validator_1]\ncount = 1\n",
			[]string{"node.Validator_1: group name"}},
		{"rate zero", "[node.validator]\ncount = 1\n[load]\nrate = 0\n",
			[]string{"bad.toml:4: load.rate: must be positive"}},
		{"size too small", "[node.validator]\ncount = 1\n[load]\nsize = 10\n",
			[]string{"bad.toml:4: load.size: 10 bytes is too small"}},
		{"bad target", "[node.validator]\ncount = 1\n[load]\ntarget = \"some\"\n",
			[]string{"bad.toml:4: load.target: \"some\""}},
		{"bad override key", "[node.validator]\ncount = 1\n[node.validator.config]\n\"mem pool\" = 1\n",
			[]string{"bad.toml:4: node.validator.config.mem pool"}},
		{"inline table override", "[node.validator]\ncount = 1\n[node.validator.config]\n\"p2p\" = { a = 1 }\n",
			[]string{"node.validator.config.p2p: value of type"}},
		{"syntax error", "[node.validator\ncount = 1\n",
			[]string{"bad.toml:1:"}},
		{"all problems at once", "[node.validator]\ncount = 0\nrelease = \"x\"\n",
			[]string{"3 problems", "count", "release", "0 validators"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", []byte(c.toml))
			if err == nil {
				t.Fatalf("no error for:\n%s", c.toml)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		if _, err := LoadFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("want not-exist error, got %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestPositions(t *testing.T) {
	p := scanPositions([]byte("a = 1\n# c\n[x.y]\n\"k.l\" = 2 # trailing\n  m='=' \n[[arr]]\nn = 3\n"))
	want := map[string]int{"a": 1, "x.y": 3, "x.y.k.l": 4, "x.y.m": 5, "arr.n": 7}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s: line %d, want %d (all: %v)", k, p[k], v, p)
		}
	}
	if p.line("x.y.zz") != 3 {
		t.Errorf("missing key falls back to its table's line")
	}
}
