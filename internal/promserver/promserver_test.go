package promserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

func TestConfigYAML(t *testing.T) {
	tests := []struct {
		name    string
		targets []Target
		golden  string // testdata/<golden>.yml; empty when an error is expected
		wantErr string
	}{
		{
			name: "two nodes with labels",
			targets: []Target{
				{Node: "validator000", Addr: "10.213.0.2:26660", Labels: map[string]string{"role": "validator", "zone": "eu", "release": "cometbft@v1.0.1"}},
				{Node: "full001", Addr: "10.213.0.3:26660", Labels: map[string]string{"role": "full", "release": "cometbft@v0.38.17"}},
			},
			golden: "two_nodes",
		},
		{name: "quoting", targets: []Target{{Node: `we"ird: #name`, Addr: "[fd00::2]:26660"}}, golden: "quoting"},
		{name: "no targets", golden: "empty"},
		{name: "duplicate node", targets: []Target{{Node: "a", Addr: "1.2.3.4:1"}, {Node: "a", Addr: "1.2.3.5:1"}}, wantErr: "listed twice"},
		{name: "missing addr", targets: []Target{{Node: "a"}}, wantErr: "required"},
		{name: "addr without port", targets: []Target{{Node: "a", Addr: "1.2.3.4"}}, wantErr: "missing port"},
		{name: "node label override", targets: []Target{{Node: "a", Addr: "1.2.3.4:1", Labels: map[string]string{"node": "b"}}}, wantErr: "bad label name"},
		{name: "invalid label name", targets: []Target{{Node: "a", Addr: "1.2.3.4:1", Labels: map[string]string{"my-label": "x"}}}, wantErr: "bad label name"},
		{name: "reserved label name", targets: []Target{{Node: "a", Addr: "1.2.3.4:1", Labels: map[string]string{"__address__": "x"}}}, wantErr: "bad label name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigYAML(tt.targets)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.golden+".yml")
			testenv.Golden(t, path, got)
			checkConfig(t, got)
		})
	}
}

// checkConfig has Prometheus' own parser judge the config when promtool is
// installed (it ships in the same Debian package).
func checkConfig(t *testing.T, cfg []byte) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Log("promtool not installed (apt-get install prometheus); config not checked by Prometheus' parser")
		return
	}
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("promtool", "check", "config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// A pid file naming a process that is not this run's Prometheus must never
// lead to a kill; the stale file goes.
func TestKillSparesOthers(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	tests := []struct {
		name string
		pid  string
	}{
		{"other program", strconv.Itoa(cmd.Process.Pid)},
		{"no such process", "999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runDir := t.TempDir()
			pidPath := filepath.Join(runDir, Dir, PIDFile)
			if err := os.MkdirAll(filepath.Dir(pidPath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pidPath, []byte(tt.pid+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Kill(runDir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(pidPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stale pid file still there: %v", err)
			}
			if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
				t.Errorf("Kill hit an unrelated process: %v", err)
			}
		})
	}
	if err := Kill(t.TempDir()); err != nil {
		t.Errorf("Kill without pid file: %v", err)
	}
}

// fakeNode serves a Prometheus exposition with a counter that grows on every
// scrape, like a node's metrics endpoint.
func fakeNode(t *testing.T) (addr string, scrapes *atomic.Int64) {
	scrapes = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		n := scrapes.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP benchnet_fake_scrapes_total Scrapes served.\n# TYPE benchnet_fake_scrapes_total counter\nbenchnet_fake_scrapes_total %d\n", n)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), scrapes
}

type sample struct {
	Node  string
	Value float64
}

// query runs an instant PromQL query against Prometheus' HTTP API.
func query(ctx context.Context, base, expr string) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, body.Error)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", expr, r.Value, err)
		}
		out = append(out, sample{Node: r.Metric["node"], Value: v})
	}
	return out, nil
}

func needRoot(t *testing.T) {
	t.Helper()
	testenv.Integration(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: Start may apt-get install prometheus; run go test as root")
	}
}

func TestStartScrapeStop(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // first run may install the package
	defer cancel()
	addr, scrapes := fakeNode(t)
	runDir := t.TempDir()
	var log strings.Builder
	t0 := time.Now()
	s, err := Start(ctx, runDir, []Target{{Node: "validator000", Addr: addr, Labels: map[string]string{"role": "validator"}}}, &log)
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, log.String())
	}
	t.Logf("Start: ready at %s after %s", s.URL, time.Since(t0))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = s.Stop(context.Background())
		}
	})
	if b, err := os.ReadFile(filepath.Join(runDir, Dir, PIDFile)); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(s.PID) {
		t.Errorf("pid file = %q, %v; want %d", b, err, s.PID)
	}

	// Scrapes every second: within a few seconds the counter is stored with
	// its node label and has grown between two scrapes.
	var got []sample
	deadline := time.Now().Add(20 * time.Second) // the scrape manager applies targets after ~5 s
	for {
		got, err = query(ctx, s.URL, `benchnet_fake_scrapes_total{job="cometbft",role="validator"}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 && got[0].Value >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(got) != 1 || got[0].Node != "validator000" || got[0].Value < 2 {
		t.Fatalf("samples = %+v, want one from node validator000 with value >= 2 (fake node served %d scrapes)", got, scrapes.Load())
	}
	t.Logf("%s after Start: %+v, fake node served %d scrapes", time.Since(t0), got, scrapes.Load())
	up, err := query(ctx, s.URL, `up{node="validator000"}`)
	if err != nil || len(up) != 1 || up[0].Value != 1 {
		t.Errorf("up = %+v, %v; want 1", up, err)
	}

	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	t.Logf("Stop took %s", time.Since(start))
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(s.PID))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid %d still in /proc after Stop: %v", s.PID, err)
	}
	if _, err := os.Stat(filepath.Join(runDir, Dir, PIDFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file still there after Stop: %v", err)
	}
	entries, err := os.ReadDir(s.DataDir)
	if err != nil || len(entries) == 0 {
		t.Errorf("data dir %s after Stop: %d entries, %v; want the TSDB", s.DataDir, len(entries), err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// After the harness dies without Stop, Kill clears the leftover server and a
// new Start on the same run directory reopens the same TSDB.
func TestKillLeftover(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr, _ := fakeNode(t)
	runDir := t.TempDir()
	targets := []Target{{Node: "n0", Addr: addr}}
	s, err := Start(ctx, runDir, targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })

	if err := Kill(runDir); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("pid %d still running after Kill", s.PID)
	}
	if _, err := os.Stat(filepath.Join(runDir, Dir, PIDFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file still there after Kill: %v", err)
	}

	s2, err := Start(ctx, runDir, targets, nil)
	if err != nil {
		t.Fatalf("restart on the same run directory: %v", err)
	}
	t.Cleanup(func() { _ = s2.Stop(context.Background()) })
	if s2.PID == s.PID {
		t.Errorf("restart reused pid %d", s.PID)
	}
}

// TestHarnessCrash runs Start in a child test process, kill -9s that child
// (the harness) and checks that Kill finds and kills the orphaned server,
// which is no longer anyone's child here.
func TestHarnessCrash(t *testing.T) {
	if dir := os.Getenv("PROMSERVER_HELPER_RUNDIR"); dir != "" {
		s, err := Start(context.Background(), dir, []Target{{Node: "n0", Addr: "127.0.0.1:9"}}, nil)
		if err != nil {
			fmt.Println("helper:", err)
			os.Exit(1)
		}
		fmt.Println("ready", s.PID)
		time.Sleep(time.Minute) // killed by the parent long before
		os.Exit(2)
	}
	needRoot(t)
	runDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHarnessCrash$", "-test.v")
	cmd.Env = append(os.Environ(), "PROMSERVER_HELPER_RUNDIR="+runDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	buf := make([]byte, 4096)
	var line strings.Builder
	for pid == 0 {
		n, err := out.Read(buf)
		line.Write(buf[:n])
		if _, rest, ok := strings.Cut(line.String(), "ready "); ok {
			if f := strings.Fields(rest); len(f) > 0 && strings.Contains(rest, "\n") {
				pid, _ = strconv.Atoi(f[0])
			}
		}
		if err != nil && pid == 0 {
			t.Fatalf("helper: %v\n%s", err, line.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("server pid %d died with the harness (%v); nothing to test", pid, err)
	}
	if err := Kill(runDir); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if st := procState(pid); st != "" && st != "Z" {
		t.Errorf("orphaned server pid %d in state %s after Kill, want gone or zombie (reaped by init)", pid, st)
	}
}

// procState is the state letter of pid from /proc/<pid>/stat, "" when gone.
func procState(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	st, _, _ := strings.Cut(rest, " ")
	return st
}
