package manifest

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	cases := []errCase{
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
			[]string{"bad.toml:1: node: the testnet has 0 validators"}},
		{"only full nodes", "[node.full]\ncount = 2\n",
			[]string{"0 validators"}},
		{"unknown release syntax", "[node.validator]\ncount = 1\nrelease = \"cometbft@latest\"\n",
			[]string{"bad.toml:3: node.validator.release: \"cometbft@latest\": releases are pinned"}},
		{"unknown release name", "[node.validator]\ncount = 1\nrelease = \"gaia@v0.34.0\"\n",
			[]string{"bad.toml:3: node.validator.release: \"gaia@v0.34.0\": unknown module name \"gaia\""}},
		{"tendermint past v0.34", "[node.validator]\ncount = 1\nrelease = \"tendermint@v0.35.9\"\n",
			[]string{"bad.toml:3: node.validator.release: \"tendermint@v0.35.9\": benchnet runs Tendermint Core v0.34.x only"}},
		{"bad metrics namespace", "[node.validator]\ncount = 1\n[node.validator.config]\n\"instrumentation.namespace\" = \"my-chain\"\n",
			[]string{"bad.toml:4: node.validator.config.instrumentation.namespace: my-chain: want a Prometheus metric name prefix"}},
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
		{"public subnet", "[network]\nsubnet = \"8.8.8.0/24\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.subnet: \"8.8.8.0/24\" is not a private range"}},
		{"subnet wider than a private range", "[network]\nsubnet = \"10.0.0.0/7\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.subnet: \"10.0.0.0/7\" is not a private range"}},
		{"everything subnet", "[network]\nsubnet = \"0.0.0.0/0\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.subnet: \"0.0.0.0/0\" is not a private range"}},
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
		{"rate nan", "[node.validator]\ncount = 1\n[load]\nrate = nan\n",
			[]string{"bad.toml:4: load.rate: must be positive", "got NaN"}},
		{"rate inf", "[node.validator]\ncount = 1\n[load]\nrate = inf\n",
			[]string{"bad.toml:4: load.rate:", "got +Inf"}},
		{"rate too high", "[node.validator]\ncount = 1\n[load]\nrate = 1e9\n",
			[]string{"bad.toml:4: load.rate:", "at most 100000"}},
		{"ramp_from nan", "[node.validator]\ncount = 1\n[load]\nshape = \"ramp\"\nramp_from = nan\n",
			[]string{"bad.toml:5: load.ramp_from: a ramp starts below rate", "got NaN"}},
		{"ramp_from -inf without ramp", "[node.validator]\ncount = 1\n[load]\nramp_from = -inf\n",
			[]string{"bad.toml:4: load.ramp_from: must be a number >= 0"}},
		{"ramp with count and no duration", "[node.validator]\ncount = 1\n[load]\nshape = \"ramp\"\ncount = 100\n",
			[]string{"bad.toml:3: load.duration: a ramp runs over a duration"}},
		{"size 2 GB", "[node.validator]\ncount = 1\n[load]\nsize = 2000000000\n",
			[]string{"bad.toml:4: load.size: 2000000000 bytes: at most 1048576"}},
		{"3000 nodes", "[node.validator]\ncount = 3000\n",
			[]string{"invalid manifest: bad.toml:2: node.validator.count: 3000 nodes: a testnet has at most 256 (see docs/manifest.md, limits)"}}, // and only that
		{"nodes over the limit in total", "[network]\nsubnet = \"10.9.0.0/16\"\n[node.validator]\ncount = 200\n[node.full]\ncount = 100\n",
			[]string{"bad.toml:3: node: 300 nodes: a testnet has at most 256"}},
		{"count overflow", "[node.validator]\ncount = 9223372036854775807\n[node.full]\ncount = 9223372036854775807\n",
			[]string{"bad.toml:2: node.validator.count:", "bad.toml:4: node.full.count:"}},
		{"negative start delay", "[node.validator]\ncount = 1\nstart_delay = \"-5s\"\n",
			[]string{"bad.toml:3: node.validator.start_delay: -5s: want 0 to 1h0m0s"}},
		{"negative duration", "[node.validator]\ncount = 1\n[load]\nduration = \"-1s\"\n",
			[]string{"bad.toml:4: load.duration: -1s"}},
		{"year-long duration", "[node.validator]\ncount = 1\n[load]\nduration = \"8760h\"\n",
			[]string{"bad.toml:4: load.duration: 8760h0m0s: want 0 to 24h0m0s"}},
		{"negative grace", "[node.validator]\ncount = 1\n[load]\ngrace = \"-1s\"\nwarmup = \"2h\"\n",
			[]string{"bad.toml:4: load.grace:", "bad.toml:5: load.warmup:"}},
		{"absurd connections", "[node.validator]\ncount = 1\n[load]\nconnections = 1000000\n",
			[]string{"bad.toml:4: load.connections: must be 1 to 1000"}},
		{"absurd count", "[node.validator]\ncount = 1\n[load]\ncount = 100000000000\n",
			[]string{"bad.toml:4: load.count: must be 0 to 10000000"}},
		{"too many txs in total", "[node.validator]\ncount = 4\n[load]\nrate = 10000\nconnections = 100\ntarget = \"all\"\nduration = \"1h\"\n",
			[]string{"load.duration: the load would send 14400000000 txs (rate × connections × duration × validators)"}},
		{"jitter banana", "[network]\njitter = \"banana\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.jitter: \"banana\": want a percentage"}},
		{"loss without percent", "[network]\nloss = \"0.1\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.loss: \"0.1\": want a percentage"}},
		{"loss over 100", "[network]\nloss = \"150%\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.loss: \"150%\""}},
		{"time_scale below 1", "[network]\ntime_scale = 0.5\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.time_scale: 0.5: want a factor in [1, 100]"}},
		{"bandwidth in bytes", "[network]\nbandwidth = \"10MBps\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.bandwidth: \"10MBps\": want a positive rate with a bit unit"}},
		{"default zone not in aws", "[network]\nzones = \"aws\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:3: node.validator.zone: the default zone \"local\" is not in zone set aws: want one of N_Virginia,", "or zone = \"random\""}},
		{"zones entry not in aws", "[network]\nzones = \"aws\"\n[node.validator]\ncount = 2\nzones = [\"Tokyo\", \"Atlantis\"]\n",
			[]string{"bad.toml:5: node.validator.zones: \"Atlantis\" is not in zone set aws"}},
		{"random without zone set", "[node.validator]\ncount = 2\nzone = \"random\"\n",
			[]string{"bad.toml:3: node.validator.zone: \"random\" draws from the zone set"}},
		{"random inside zones", "[network]\nzones = \"aws\"\n[node.validator]\ncount = 2\nzones = [\"random\"]\n",
			[]string{"bad.toml:5: node.validator.zones: \"random\" is for zone, not zones"}},
		{"empty zone label", "[node.validator]\ncount = 2\nzones = [\"a\", \"\"]\n",
			[]string{"bad.toml:3: node.validator.zones: \"\" is not a zone name"}},
		{"zone set missing", "[network]\nzones = \"no-such.csv\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.zones: \"no-such.csv\" is neither a built-in zone set (aws) nor a readable CSV file"}},
		{"peers without random", "[network]\npeers = 2\n[node.validator]\ncount = 4\n",
			[]string{"bad.toml:2: network.peers: only the \"random\" topology picks peers"}},
		{"random peers too many", "[network]\ntopology = \"random\"\npeers = 4\n[node.validator]\ncount = 4\n",
			[]string{"bad.toml:3: network.peers: 4: want 1 to 3"}},
		{"random with one node", "[network]\ntopology = \"random\"\n[node.validator]\ncount = 1\n",
			[]string{"bad.toml:2: network.topology: \"random\" needs at least 2 nodes"}},
		{"nan config override", "[node.validator]\ncount = 1\n[node.validator.config]\n\"mempool.size\" = nan\n",
			[]string{"bad.toml:4: node.validator.config.mempool.size: NaN is not a value"}},
		{"table in config array", "[node.validator]\ncount = 1\n[node.validator.config]\n\"p2p.x\" = [{a = 1}]\n",
			[]string{"bad.toml:4: node.validator.config.p2p.x: an array of"}},
		{"harness key override", "[node.validator]\ncount = 1\n[node.validator.config]\n\"rpc.laddr\" = \"tcp://0.0.0.0:1\"\n",
			[]string{"bad.toml:4: node.validator.config.rpc.laddr: benchnet sets rpc.laddr itself"}},
		{"random with seeds", "[network]\ntopology = \"random\"\n[node.validator]\ncount = 4\n[node.seed]\ncount = 1\n",
			[]string{"bad.toml:2: network.topology: \"random\" turns PEX off"}},
		{"all problems at once", "[node.validator]\ncount = 0\nrelease = \"x\"\n",
			[]string{"3 problems", "count", "release", "0 validators"}},
	}
	checkErrors(t, cases)
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

// A zone CSV is read at validation, relative to the manifest's directory (not
// the working directory), and its own errors carry its own file:line.
func TestZoneCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("sub/lat.csv", "From/to,east,west\neast,0,40\nwest,40,0\n")
	write("sub/broken.csv", "From/to,east,west\neast,0,40\n\nwest,forty,0\n")
	good := write("sub/ok.toml", "[network]\nzones = \"lat.csv\"\n[node.validator]\ncount = 4\nzone = \"random\"\n")
	bad := write("sub/bad.toml", "name = \"b\"\n[network]\nzones = \"broken.csv\"\n[node.validator]\ncount = 1\nzone = \"east\"\n")
	wrongZone := write("sub/wz.toml", "[network]\nzones = \"lat.csv\"\n[node.validator]\ncount = 1\nzone = \"north\"\n")
	fifo := filepath.Join(dir, "sub", "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoManifest := write("sub/fifo.toml", "[network]\nzones = \"fifo.csv\"\n[node.validator]\ncount = 1\n")

	// From another working directory: the CSV is found next to the manifest.
	t.Chdir(t.TempDir())
	m, err := LoadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.ZoneNames(), ","); got != "east,west" {
		t.Errorf("zone names %q", got)
	}
	if want := filepath.Join(dir, "sub", "lat.csv"); m.ZonesPath() != want {
		t.Errorf("zones path %q, want %q", m.ZonesPath(), want)
	}
	for _, c := range []struct{ file, want string }{
		{bad, bad + ":3: network.zones: " + filepath.Join(dir, "sub", "broken.csv") + ":4: column east: \"forty\" is not a delay in ms"},
		{wrongZone, wrongZone + ":5: node.validator.zone: \"north\" is not in zone set lat.csv: want one of east, west"},
		{fifoManifest, fifoManifest + ":2: network.zones: " + fifo + " is not a regular file"},
	} {
		_, err := LoadFile(c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v\nwant it to contain %q", filepath.Base(c.file), err, c.want)
		}
	}
}

func TestParseZoneCSVErrors(t *testing.T) {
	for _, c := range []struct {
		csv  string
		line int
		msg  string
	}{
		{"", 1, "want a header row"},
		{"From/to,a\n", 1, "want a header row"},
		{"From/to,a,a\na,0,0\n", 1, "duplicate zone"},
		{"From/to,a,b\na,0,1\nc,1,0\n", 3, "zone \"c\" not in header"},
		{"From/to,a,b\na,0,1\na,0,1\n", 3, "listed twice"},
		{"From/to,a,b\na,0,1\n\n\nb,1\n", 5, "1 values, want 2"},
		{"From/to,a,b\na,0,NaN\nb,1,0\n", 2, "column b: \"NaN\""},
		{"From/to,a,b\na,0,-1\nb,1,0\n", 2, "column b: \"-1\""},
		{"From/to,a,b\na,0,1e9\nb,1,0\n", 2, "column b: \"1e9\""},
		{"From/to,a,b\na,0,1\n", 2, "no row for zone \"b\""},
		{"From/to,a,b\na,0,\"1\n", 2, "extraneous or missing"},
	} {
		_, err := ParseZoneCSV(strings.NewReader(c.csv))
		var ce *CSVError
		if !errors.As(err, &ce) || ce.Line != c.line || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%q: got %v, want line %d containing %q", c.csv, err, c.line, c.msg)
		}
	}
}

// Flags are checked by the same pass: a value that would pass with a
// manifest line passes as a flag, and a NaN is refused either way.
func TestCheckLoadIsValidate(t *testing.T) {
	m, err := Parse("ok.toml", []byte("[node.validator]\ncount = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, MaxRate * 2} {
		l := m.Load
		l.Rate = rate
		if errs := CheckLoad(l, 2); len(errs) == 0 || errs[0].Field != "load.rate" {
			t.Errorf("rate %v: errors %v", rate, errs)
		}
		m.Load.Rate = rate
		if errs := m.Validate(); len(errs) == 0 {
			t.Errorf("rate %v passes Validate", rate)
		}
	}
}

// TestLoadCopy: a run directory's copy of a manifest finds a relative zone
// CSV next to the original (benchnet load re-reads the copy), not next to
// the copy, and its errors name the copy.
func TestLoadCopy(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "lat.csv"), []byte("From/to,east,west\neast,0,40\nwest,40,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "[network]\nzones = \"lat.csv\"\n[node.validator]\ncount = 2\nzone = \"east\"\n"
	orig := filepath.Join(src, "m.toml")
	run := t.TempDir()
	cp := filepath.Join(run, "manifest.toml")
	for _, p := range []string{orig, cp} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadCopy(cp, ""); err == nil || !strings.Contains(err.Error(), cp+":2") {
		t.Errorf("copy without its source: err = %v, want the CSV missing at %s:2", err, cp)
	}
	m, err := LoadCopy(cp, orig)
	if err != nil {
		t.Fatalf("copy with its source: %v", err)
	}
	if got := strings.Join(m.ZoneNames(), ","); got != "east,west" {
		t.Errorf("zones = %s, want east,west from %s", got, src)
	}
}
