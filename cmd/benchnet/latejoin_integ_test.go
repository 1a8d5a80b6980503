package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// rotateLoadManifest is the quickstart plus a [rotate] group of one full
// node: `up` never starts it (only `run` rotates it).
const rotateLoadManifest = `name = "rotload"
seed = 1

[network]
subnet = "10.213.254.0/24"
topology = "full"

[node.validator]
count = 4
release = "cometbft@v1.0.1"

[node.ephemeral]
role = "full"
count = 1
release = "cometbft@v1.0.1"

[rotate]
group = "ephemeral"
at_a_time = 1
cycles = 1
start = "1s"
keep = "1s"
catchup_timeout = "1m"

[load]
rate = 100
connections = 1
duration = "5s"
size = 1024
target = "round-robin"
`

// TestLoadSkipsNeverStartedRotateNodes: `benchnet up` then `benchnet load`
// on a manifest with [rotate]: the rotating node up never started is named,
// and the warm-up, the load, the mempool poller, the collector and the drain
// never dial it; the load's txs are all accounted.
func TestLoadSkipsNeverStartedRotateNodes(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	mpath := filepath.Join(t.TempDir(), "rotload.toml")
	if err := os.WriteFile(mpath, []byte(rotateLoadManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.OutputDir(t)
	upOut, err := exec.Command(bin, "up", mpath, "--output", out).CombinedOutput()
	dirs, _ := filepath.Glob(filepath.Join(out, "*-rotload"))
	if len(dirs) == 1 {
		t.Cleanup(func() {
			if o, err := exec.Command(bin, "down", dirs[0]).CombinedOutput(); err != nil {
				t.Errorf("down: %v\n%s", err, o)
			}
		})
	}
	if err != nil || len(dirs) != 1 {
		t.Fatalf("up: %v (run dirs %v)\n%s", err, dirs, upOut)
	}
	loads := filepath.Join(out, "loads")
	cmd := exec.Command(bin, "load", "--run", dirs[0], "--output", loads, "--count", "300")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr.String())
	}
	t.Logf("load:\n%s", stderr.String())
	if !strings.Contains(stderr.String(), `not started by 'up' ([rotate] group "ephemeral"`) || !strings.Contains(stderr.String(), "ephemeral0") {
		t.Error("load did not say that it leaves ephemeral0 ([rotate], never started) out")
	}
	ldirs, _ := filepath.Glob(filepath.Join(loads, "*-load"))
	if len(ldirs) != 1 {
		t.Fatalf("load run directories: %v", ldirs)
	}
	d, err := rundir.Open(ldirs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Sent != 300 || a.Committed != 300 {
		t.Errorf("accounting %+v, want 300 sent and committed", a)
	}
	mp, _, err := rundir.MempoolCSV.ReadFile(rundir.MempoolCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	polled := map[string]int{}
	for _, s := range mp {
		polled[s.Node]++
	}
	if polled["ephemeral0"] != 0 || polled["validator0"] == 0 {
		t.Errorf("mempool.csv rows by node: %v, want the validators' and none of ephemeral0", polled)
	}
	ev, err := d.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		if e.Node == "ephemeral0" {
			t.Errorf("event about ephemeral0, which never ran: %+v", e)
		}
	}
	errs, _, err := rundir.ScrapeErrorsCSV.ReadFile(rundir.ScrapeErrorsCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		if e.Node == "ephemeral0" {
			t.Fatalf("scrape_errors.csv: ephemeral0 scraped: %+v", e)
		}
	}
	h, err := d.ReadHarvest()
	if err != nil {
		t.Fatal(err)
	}
	if h.Drain == nil || len(h.Drain.Nodes) != 4 || strings.Contains(strings.Join(h.Drain.Nodes, " "), "ephemeral0") {
		t.Errorf("drain waited for %v, want the 4 validators", h.Drain)
	}
}
