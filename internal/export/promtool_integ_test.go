package export

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/history/historytest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestOpenMetricsBackfill: Debian's promtool accepts the export as is, and
// a Prometheus started on the backfilled blocks answers each node's
// height under its job label, as a live scrape would have stored it.
func TestOpenMetricsBackfill(t *testing.T) {
	testenv.Integration(t)
	promtool := testenv.NeedCommand(t, "promtool", "prometheus")
	prom := testenv.NeedCommand(t, "prometheus", "prometheus")
	dir := historytest.Run1()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "metrics.om")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := OpenMetrics(f, dir); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(tmp, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", file, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool refused the export: %v\n%s", err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(tmp, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The fixture is from 2023: a retention that keeps it.
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+data, "--storage.tsdb.retention.time=100y",
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = testenv.LogWriter(t), testenv.LogWriter(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus not ready in 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}

	d := &rundir.Dir{Path: dir}
	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{} // each node's last height
	var at int64
	for _, s := range samples {
		if s.Metric == "cometbft_consensus_height" {
			want[s.Node] = s.Value
			at = max(at, s.TimeNs)
		}
	}
	got := query(t, base, "cometbft_consensus_height", at)
	if len(got) != len(want) {
		t.Fatalf("heights by job %v, want %v", got, want)
	}
	for job, v := range want {
		if got[job] != v {
			t.Errorf("job %s: height %v, want %v", job, got[job], v)
		}
	}
	cpus := query(t, base, `count by (job) (node_cpu_seconds_total{mode="idle"})`, at)
	if cpus[HarnessJob] != 2 {
		t.Errorf("CPUs counted from node_cpu_seconds_total: %v, want 2", cpus)
	}

	// The dashboard's panels each draw something from the export: every
	// query is valid PromQL, and each panel has a query with data.
	dash := loadDashboard(t)
	drawn := map[string]bool{}
	for _, x := range dash.targets() {
		if len(query(t, base, resolve(x.expr), at)) > 0 {
			drawn[x.panel] = true
		}
	}
	for _, p := range dash.panels {
		if title := p["title"].(string); !drawn[title] {
			t.Errorf("dashboard panel %q draws nothing from the export", title)
		}
	}
}

// query is one instant query at ns (Prometheus' lookback covers the last
// sample before it): value by job.
func query(t *testing.T, base, expr string, ns int64) map[string]float64 {
	t.Helper()
	u := fmt.Sprintf("%s/api/v1/query?query=%s&time=%s", base, url.QueryEscape(expr), strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64))
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s", expr, err, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Metric["job"]] = v
	}
	t.Logf("%s at %d: %v", expr, ns, out)
	return out
}
