package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

const subnetLateJoin = "10.213.253.0/24"

// lateJoinDelay is full0's start_delay: past Up (about 7 s with the
// accounts app on this machine) and the warm-up, well before the load's end.
const lateJoinDelay = 15 * time.Second

// TestLateJoinerUnderLoad is `benchnet run` on four validators and one full
// node with a start_delay, all running the accounts app, under the accounts
// workload whose round-robin-all targets every validator and full node. The
// full node is not running when the load begins: the load skips it (an
// event, load.json, the report) and its accounts go to the validators, so
// every tx the manifest asks for is sent and accounted. It joins during the
// load: the mempool poller and the collector take it in from its start
// (rows after it, no failed scrape before it), and the drain waits for it.
func TestLateJoinerUnderLoad(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	exe := benchnetExe(t)
	const nAccounts, perAccount, rate = 5, 150, 10 // 15 s of load
	text := fmt.Sprintf(`name = "latejoin-load"
seed = 5
[network]
subnet = %q
[node.validator]
count = 4
release = "cometbft@v1.0.1"
app = "accounts"
[node.validator.config]
"consensus.timeout_commit" = "300ms"
[node.full]
role = "full"
count = 1
release = "cometbft@v1.0.1"
app = "accounts"
start_delay = %q
[node.full.config]
"consensus.timeout_commit" = "300ms"
[load]
workload = "accounts"
accounts = %d
txs_per_account = %d
rate = %d
warmup = "20s"
grace = "10s"
`, subnetLateJoin, lateJoinDelay, nAccounts, perAccount, rate)
	out := runHosted(t, "latejoin-load.toml", text, exe, 2*time.Minute)
	dir := out.RunDir
	ev := readEvents(t, dir)
	loadStart, loadDone := eventTime(t, ev, "load_start"), eventTime(t, ev, "load_done")
	var started time.Time
	for _, e := range ev {
		if e.Kind == rundir.EventNodeStarted && e.Node == "full0" {
			started = e.Time
		}
	}
	if started.IsZero() {
		t.Fatal("full0 never started (no node_started event)")
	}
	t.Logf("load %s..%s, full0 started at +%s", loadStart.Format("15:04:05.000"), loadDone.Format("15:04:05.000"), started.Sub(loadStart).Round(time.Millisecond))
	if !started.After(loadStart) || !started.Before(loadDone) {
		t.Fatalf("full0 started at %s, not during the load (%s..%s): the timing this test relies on did not hold (Up slower than %s?)",
			started.Format("15:04:05.000"), loadStart.Format("15:04:05.000"), loadDone.Format("15:04:05.000"), lateJoinDelay)
	}

	// The load: every tx asked for sent and accounted, none to full0.
	a := out.Results.Accounting
	if a.Sent+a.SendErrors != nAccounts*perAccount || a.SendErrors != 0 {
		t.Errorf("attempted %d (send errors %d), want exactly %d", a.Sent+a.SendErrors, a.SendErrors, nAccounts*perAccount)
	}
	if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending || a.Committed != a.Sent {
		t.Errorf("accounting: %+v, want every sent tx committed", a)
	}
	sent, _, err := rundir.SentCSV.ReadFile(filepath.Join(dir, rundir.SentCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, s := range sent {
		perNode[s.Node]++
	}
	if perNode["full0"] != 0 || len(sent) != nAccounts*perAccount {
		t.Errorf("sent.csv: %d rows by node %v, want %d and none to full0", len(sent), perNode, nAccounts*perAccount)
	}
	d, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ls, err := d.ReadLoad()
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Skipped) != 1 || ls.Skipped[0].Node != "full0" || !strings.Contains(ls.Skipped[0].Reason, "start_delay") {
		t.Errorf("load.json Skipped = %+v, want full0 with its start_delay", ls.Skipped)
	}
	skipEvent := false
	for _, e := range ev {
		if e.Kind == rundir.EventLoadTargetSkipped && e.Node == "full0" {
			skipEvent = !e.Time.After(loadStart)
		}
	}
	if !skipEvent {
		t.Error("no load_target_skipped event for full0 before load_start")
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Not loaded: full0") {
		t.Error("report.md does not say that full0 was not loaded")
	}

	// The mempool poller: full0's rows from its start on, none before.
	mp, _, err := rundir.MempoolCSV.ReadFile(filepath.Join(dir, rundir.MempoolCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	var mpRows int
	for _, s := range mp {
		if s.Node != "full0" {
			continue
		}
		mpRows++
		if s.TimeNs < started.UnixNano() {
			t.Errorf("mempool.csv: full0 polled at %s, before its start", time.Unix(0, s.TimeNs).Format("15:04:05.000"))
		}
	}
	if mpRows == 0 {
		t.Error("mempool.csv: no row for full0 (the poller never took it in)")
	}

	// The collector: full0's samples from its start on; no failed scrape
	// before it.
	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	var smRows int
	for _, s := range samples {
		if s.Node == "full0" {
			smRows++
			if s.TimeNs < started.UnixNano() {
				t.Fatalf("samples.csv.gz: full0 scraped at %s, before its start", time.Unix(0, s.TimeNs).Format("15:04:05.000"))
			}
		}
	}
	if smRows == 0 {
		t.Error("samples.csv.gz: no sample of full0 (the collector never took it in)")
	}
	for _, e := range ev {
		if e.Kind == rundir.EventScrapeFailed && e.Node == "full0" {
			t.Errorf("scrape_failed for full0 at %s (started %s): %s", e.Time.Format("15:04:05.000"), started.Format("15:04:05.000"), e.Detail)
		}
	}

	// The drain waited for full0 too.
	h, err := d.ReadHarvest()
	if err != nil {
		t.Fatal(err)
	}
	if h.Drain == nil || !slices.Contains(h.Drain.Nodes, "full0") || len(h.Drain.Nodes) != 5 {
		t.Errorf("harvest.json drain = %+v, want it to wait for all 5 nodes, full0 included", h.Drain)
	}
}
