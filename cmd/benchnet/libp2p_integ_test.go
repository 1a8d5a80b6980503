package main

import (
	"bufio"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// TestLibp2pTransport runs examples/libp2p.toml on real v0.40.0 nodes:
// each node's go-libp2p host ID, as its log prints it, is the ID the other
// nodes' bootstrap_peers name it by; every node keeps its 3 peers
// (cometbft_p2p_peers, which the libp2p peer set counts) and the chain
// commits the whole load.
func TestLibp2pTransport(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v0.40.0"}, "cometbft")
	m := exampleVariant(t, "libp2p.toml", map[string]string{`"10.213.40.0/24"`: `"10.213.41.0/24"`, `duration = "60s"`: `duration = "10s"`})
	out := testenv.OutputDir(t)
	if b, err := exec.Command(benchnetBinary(t), "run", m, "--output", out).CombinedOutput(); err != nil {
		t.Fatalf("benchnet run: %v\n%s", err, b)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-libp2p"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	dir := dirs[0]
	hostID := regexp.MustCompile(`Using libp2p transport\s+module=p2p host_id=(\w+)`)
	logged := map[string]string{}
	for _, n := range []string{"validator0", "validator1", "validator2", "validator3"} {
		b, _ := os.ReadFile(filepath.Join(dir, "logs", n+".log"))
		m := hostID.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s's log does not say it uses the libp2p transport", n)
		}
		logged[n] = string(m[1])
	}
	for _, n := range []string{"validator0", "validator1", "validator2", "validator3"} {
		var cfg struct {
			P2P struct {
				Libp2p struct {
					Boot []struct{ Host, ID string } `toml:"bootstrap_peers"`
				} `toml:"libp2p"`
			} `toml:"p2p"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "homes", n, "config", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := toml.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		if len(cfg.P2P.Libp2p.Boot) != 3 {
			t.Fatalf("%s: %d bootstrap peers", n, len(cfg.P2P.Libp2p.Boot))
		}
		for _, p := range cfg.P2P.Libp2p.Boot {
			found := false
			for peer, id := range logged {
				found = found || (id == p.ID && peer != n)
			}
			if !found {
				t.Errorf("%s: bootstrap peer %s %s is no other node's logged host ID (%v)", n, p.Host, p.ID, logged)
			}
		}
	}
	res, err := (&rundir.Dir{Path: dir}).ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.Accounting.Sent == 0 || res.Accounting.Committed != res.Accounting.Sent {
		t.Errorf("valid %v, %+v (%v)", res.Valid, res.Accounting, res.Invalid)
	}
	// The last sample of each node's peer gauge.
	f, err := os.Open(filepath.Join(dir, "metrics", "samples.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, ",cometbft_p2p_peers,") {
			fields := strings.Split(l, ",")
			last[fields[1]] = fields[len(fields)-1]
		}
	}
	if len(last) != 4 {
		t.Fatalf("peer gauges of %d nodes: %v", len(last), last)
	}
	for n, v := range last {
		if v != "3" {
			t.Errorf("%s ended with %s peers, want 3", n, v)
		}
	}
}
