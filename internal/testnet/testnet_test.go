package testnet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// needRelease skips unless root and the release binary is already cached:
// tests do not build releases (scripts/test.sh does, via `benchnet setup --tests`).
func needRelease(t *testing.T, version string) {
	t.Helper()
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: version}, "cometbft")
}

// loadExample reads an example manifest and moves it onto its own subnet, so
// the test never collides with a user's run of the same example.
func loadExample(t *testing.T, name, subnet string) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "subnet") {
			lines[i] = `subnet = "` + subnet + `"`
		}
	}
	m, err := manifest.Parse(name, []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUpDown brings the quickstart and the v0.38 example up for real, checks
// every node makes blocks and sees its peers, tears down, and checks that
// nothing of the run is left on the machine.
func TestUpDown(t *testing.T) {
	for _, tc := range []struct {
		example, version, subnet string
	}{
		{"quickstart.toml", "v1.0.1", "10.213.240.0/24"},
		{"v038.toml", "v0.38.17", "10.213.233.0/24"},
	} {
		t.Run(tc.example, func(t *testing.T) {
			needRelease(t, tc.version)
			m := loadExample(t, tc.example, tc.subnet)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 60 * time.Second, Log: testenv.LogWriter(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tn.Down(context.Background()) })
			t.Logf("%s up in %s", tc.example, time.Since(start).Round(time.Millisecond))

			for _, n := range tn.Plan.Nodes {
				c := cometrpc.New(n.RPCURL())
				st, err := c.Status(ctx)
				if err != nil {
					t.Fatalf("%s: %v", n.Name, err)
				}
				if st.Height < 2 {
					t.Errorf("%s at height %d, want >= 2", n.Name, st.Height)
				}
				if !strings.Contains(st.Version, strings.TrimPrefix(tc.version, "v")) {
					t.Errorf("%s runs version %q, want %s", n.Name, st.Version, tc.version)
				}
				peers, err := c.Peers(ctx)
				if err != nil {
					t.Fatalf("%s peers: %v", n.Name, err)
				}
				if peers != len(tn.Plan.Nodes)-1 {
					t.Errorf("%s has %d peers, want %d", n.Name, peers, len(tn.Plan.Nodes)-1)
				}
			}
			for _, f := range []string{"manifest.toml", "plan.json", "state.json", "logs/validator0.log", "homes/validator0/config/config.toml"} {
				if _, err := os.Stat(tn.Dir.Join(f)); err != nil {
					t.Errorf("run directory lacks %s: %v", f, err)
				}
			}
			provs, _ := filepath.Glob(tn.Dir.Join("provenance", "*.txt"))
			if len(provs) == 0 {
				t.Errorf("no provenance recorded")
			}

			var pids []int
			for _, pid := range tn.PIDs() {
				pids = append(pids, pid)
			}
			if len(pids) != len(tn.Plan.Nodes) {
				t.Fatalf("%d node pids, want %d", len(pids), len(tn.Plan.Nodes))
			}
			if err := tn.Down(ctx); err != nil {
				t.Fatalf("down: %v", err)
			}
			left, err := Leftovers(ctx, tn.RunID, pids)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("left after down: %v", left)
			}
		})
	}
}

// TestUpFailsClearly: a node that cannot start makes Up fail fast with the
// node's log tail, and still removes everything.
func TestUpFailsClearly(t *testing.T) {
	needRelease(t, "v1.0.1")
	m := loadExample(t, "quickstart.toml", "10.213.234.0/24")
	// A config value the release cannot parse: the node exits at start.
	for _, g := range m.Node {
		g.Config = map[string]any{"mempool.size": "not-a-number"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 30 * time.Second, Log: testenv.LogWriter(t)})
	if err == nil {
		_ = tn.Down(ctx)
		t.Fatal("Up succeeded with an unparsable config value")
	}
	t.Logf("error after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "last lines of") {
		t.Errorf("error should say which node exited and show its log tail: %v", err)
	}
	if time.Since(start) > 25*time.Second {
		t.Errorf("took %s: a crashed node should fail Up at once, not at the ready timeout", time.Since(start))
	}
}

func outputDir(t *testing.T) string { return testenv.OutputDir(t) }

// TestSubnetInUse: a subnet that overlaps an address of the host is the
// manifest's fault: the error names the manifest line and the interface.
func TestSubnetInUse(t *testing.T) {
	needRelease(t, "v1.0.1")
	ctx := context.Background()
	dev := "bntestbr0"
	if out, err := exec.Command("ip", "link", "add", dev, "type", "bridge").CombinedOutput(); err != nil {
		testenv.Skip(t, "cannot create a bridge: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", dev).Run() })
	if out, err := exec.Command("ip", "addr", "add", "10.213.238.1/24", "dev", dev).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	m := loadExample(t, "quickstart.toml", "10.213.238.0/24")
	_, err := Up(ctx, m, Options{Output: outputDir(t), Log: testenv.LogWriter(t)})
	var merrs manifest.Errors
	if !errors.As(err, &merrs) {
		t.Fatalf("want a manifest error, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "quickstart.toml:8: network.subnet:") || !strings.Contains(msg, dev) {
		t.Errorf("error should name the manifest line and the interface: %v", err)
	}
}
