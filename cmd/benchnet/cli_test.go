package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv/testrel"

	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testnet"
)

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"plan", "../../examples/quickstart.toml"}, exitOK},
		{[]string{"plan", "--json"}, exitOK},
		{[]string{"plan", "testdata/bad.toml"}, exitUsage},
		{[]string{"plan", "testdata/missing.toml"}, exitFailure},
		{[]string{"plan", "--no-such-flag"}, exitUsage},
		{[]string{"plan", "a.toml", "b.toml"}, exitUsage},
		{[]string{"build", "cometbft@latest"}, exitUsage},
		{[]string{"run", "--rate", "0"}, exitUsage},
		{[]string{"run", "--size", "10"}, exitUsage},
		{[]string{"run", "--format", "loadtime", "--size", "1023"}, exitUsage},
	} {
		if got := run(tc.args); got != tc.want {
			t.Errorf("benchnet %s: exit %d, want %d", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestInvalidFlagMessage: a bad load flag is named as the flag, not as a
// manifest line.
func TestInvalidFlagMessage(t *testing.T) {
	out := runBinary(t, "run", "--rate", "0", "--size", "10")
	want := `invalid flag --rate: must be positive (tx/s per connection), got 0; --size: 10 bytes is too small for the "kv" payload: want at least 48`
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestInvalidManifestMessage: every problem, each with file:line and key.
func TestInvalidManifestMessage(t *testing.T) {
	out := runBinary(t, "plan", "testdata/bad.toml")
	for _, want := range []string{
		"testdata/bad.toml:4: node.validator.count: must be at least 1",
		"testdata/bad.toml:5: node.validator.release:",
		"testdata/bad.toml:8: load.rate: must be positive",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// benchnetBinary builds the CLI once per test process.
func benchnetBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "benchnet-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "benchnet")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build benchnet: %v", buildErr)
	}
	return binPath
}

func runBinary(t *testing.T, args ...string) string {
	t.Helper()
	out, _ := exec.Command(benchnetBinary(t), args...).CombinedOutput()
	return string(out)
}

// TestKill9ThenDown kills `benchnet up` with SIGKILL while its nodes run, then
// checks that `benchnet down` removes every namespace, link and process.
func TestKill9ThenDown(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, plan.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	manifestPath := filepath.Join(t.TempDir(), "k9.toml")
	data, err := os.ReadFile("../../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"10.213.0.0/24"`), []byte(`"10.213.235.0/24"`), 1)
	if err := os.WriteFile(manifestPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.OutputDir(t)

	up := exec.Command(bin, "up", manifestPath, "--output", out)
	var log bytes.Buffer
	up.Stdout, up.Stderr = &log, &log
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until all four node processes are recorded, then kill -9.
	var runDir string
	var pids map[string]int
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		dirs, _ := filepath.Glob(filepath.Join(out, "*-quickstart"))
		if len(dirs) == 1 {
			runDir = dirs[0]
			pids = local.NodePIDs(filepath.Join(runDir, "state.json"))
			if len(pids) == 4 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(pids) != 4 {
		_ = up.Process.Kill()
		t.Fatalf("nodes not started within 60s:\n%s", log.String())
	}
	if err := up.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = up.Wait()

	var st struct {
		RunID string `json:"run_id"`
	}
	raw, err := os.ReadFile(filepath.Join(runDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil || st.RunID == "" {
		t.Fatalf("state file has no run id (%v): %s", err, raw)
	}
	var pidList []int
	for _, p := range pids {
		pidList = append(pidList, p)
	}
	left, err := testnet.Leftovers(t.Context(), st.RunID, pidList)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) == 0 {
		t.Fatal("nothing was running after kill -9 of up: the test proves nothing")
	}
	downOut, err := exec.Command(bin, "down", runDir).CombinedOutput()
	if err != nil {
		t.Fatalf("benchnet down: %v\n%s", err, downOut)
	}
	left, err = testnet.Leftovers(t.Context(), st.RunID, pidList)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after down: %v", left)
	}
	for _, a := range mustActive(t) {
		if strings.HasPrefix(a, runDir) {
			t.Errorf("run still registered as active: %s", a)
		}
	}
}

func mustActive(t *testing.T) []string {
	t.Helper()
	a, err := local.ActiveRuns()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
