package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
	"github.com/benchnet/benchnet/internal/testnet"
)

// zonesManifest writes examples/zones.toml moved onto subnet, with the
// userspace link emulator forced (auto would pick netem on a kernel that has
// it), and returns its path.
func zonesManifest(t *testing.T, subnet string) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/zones.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `subnet = "10.213.4.0/24"`, `subnet = "`+subnet+`"`+"\nlinkem = \"userspace\"", 1)
	if !strings.Contains(s, subnet) {
		t.Fatal("examples/zones.toml changed: no subnet line to move")
	}
	path := filepath.Join(t.TempDir(), "zones.toml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// foregroundUp starts `benchnet up` on a userspace-links manifest and waits
// until it holds the testnet in the foreground. It returns the process, its
// output, the run directory, run id and node pids.
type upProc struct {
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan error
	runDir string
	runID  string
	pids   []int
}

func foregroundUp(t *testing.T, bin, manifestPath, out string) *upProc {
	t.Helper()
	u := &upProc{done: make(chan error, 1)}
	u.cmd = exec.Command(bin, "up", manifestPath, "--output", out)
	u.cmd.Stdout, u.cmd.Stderr = &u.stdout, &u.stderr
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { u.done <- u.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-u.done:
		default: // the test failed with up still running: end it, then its run
			_ = u.cmd.Process.Kill()
			<-u.done
			if u.runDir != "" {
				_ = exec.Command(bin, "down", u.runDir).Run()
			}
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(u.stdout.String(), "staying in the foreground") {
		select {
		case err := <-u.done:
			u.done <- err
			t.Fatalf("up exited before holding the testnet (%v):\n%s\n%s", err, u.stdout.String(), u.stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("up not in the foreground within 90s:\n%s\n%s", u.stdout.String(), u.stderr.String())
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-zones"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	u.runDir = dirs[0]
	var st struct {
		RunID   string `json:"run_id"`
		Harness *struct {
			PID int `json:"pid"`
		} `json:"harness"`
	}
	raw, err := os.ReadFile(filepath.Join(u.runDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil || st.RunID == "" {
		t.Fatalf("state file has no run id (%v): %s", err, raw)
	}
	if st.Harness == nil || st.Harness.PID != u.cmd.Process.Pid {
		t.Errorf("state file does not record up (pid %d) as the run's harness: %s", u.cmd.Process.Pid, raw)
	}
	u.runID = st.RunID
	for _, p := range proctable.NodePIDs(filepath.Join(u.runDir, "state.json")) {
		u.pids = append(u.pids, p)
	}
	if len(u.pids) != 4 {
		t.Fatalf("%d node processes recorded, want 4", len(u.pids))
	}
	return u
}

// waitExit waits for up to exit within d and returns its exit code.
func (u *upProc) waitExit(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case err := <-u.done:
		u.done <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("up still running %s after its testnet was taken down:\n%s\n%s", d, u.stdout.String(), u.stderr.String())
		return -1
	}
}

// assertGone checks nothing of the run is left: namespaces, links,
// processes, the registry entry.
func (u *upProc) assertGone(t *testing.T) {
	t.Helper()
	left, err := testnet.Leftovers(t.Context(), u.runID, u.pids)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after down: %v", left)
	}
	for _, a := range mustActive(t) {
		if strings.HasPrefix(a, u.runDir) {
			t.Errorf("run still registered as active: %s", a)
		}
	}
}

// TestDownEndsForegroundUp: `benchnet up` holding userspace links in the
// foreground, then `benchnet down` from another terminal. down asks up to
// end the run, up tears down and exits 0 within seconds, neither prints an
// error, and nothing of the run is left.
func TestDownEndsForegroundUp(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	u := foregroundUp(t, bin, zonesManifest(t, "10.213.228.0/24"), testenv.OutputDir(t))
	checkStatus(t, bin, u.runDir)

	start := time.Now()
	downOut, err := exec.Command(bin, "down", u.runDir).CombinedOutput()
	downTook := time.Since(start)
	if err != nil {
		t.Fatalf("benchnet down: %v\n%s", err, downOut)
	}
	code := u.waitExit(t, 10*time.Second)
	t.Logf("down returned after %s, up exited %s after down started (code %d)\ndown:\n%s\nup stdout:\n%s\nup stderr (tail):\n%s",
		downTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), code, downOut, u.stdout.String(), lastLines(u.stderr.String(), 6))
	if code != 0 {
		t.Errorf("up exited with code %d, want 0", code)
	}
	for _, bad := range []string{"error", "rename", "no such file", "benchnet:"} {
		if strings.Contains(strings.ToLower(string(downOut)), bad) {
			t.Errorf("down printed %q:\n%s", bad, downOut)
		}
		if strings.Contains(strings.ToLower(u.stderr.String()), bad) {
			t.Errorf("up printed %q:\n%s", bad, u.stderr.String())
		}
	}
	if !strings.Contains(string(downOut), "asking it to end the run") {
		t.Errorf("down did not ask the live up to end the run:\n%s", downOut)
	}
	if !strings.Contains(u.stdout.String(), "zones is down") {
		t.Errorf("up did not report the testnet down:\n%s", u.stdout.String())
	}
	u.assertGone(t)
}

// TestUpNoticesTestnetGone: a node's namespace removed from under a
// foreground up (a sweep, an old `down` that did not ask) makes up notice
// within a few seconds, remove what is left and exit 0.
func TestUpNoticesTestnetGone(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	u := foregroundUp(t, bin, zonesManifest(t, "10.213.229.0/24"), testenv.OutputDir(t))

	start := time.Now()
	ns := local.NetnsName(u.runID, "validator2")
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns del %s: %v %s", ns, err, out)
	}
	code := u.waitExit(t, 10*time.Second)
	t.Logf("up exited %s after the namespace went (code %d)\nup stdout:\n%s", time.Since(start).Round(time.Millisecond), code, u.stdout.String())
	if code != 0 {
		t.Errorf("up exited with code %d, want 0\n%s", code, u.stderr.String())
	}
	if !strings.Contains(u.stdout.String(), "taken down elsewhere") {
		t.Errorf("up did not say why it ended:\n%s", u.stdout.String())
	}
	u.assertGone(t)
}

// TestPreserveRefusedWithUserspaceLinks: `run --preserve` cannot keep a
// testnet whose links live in the run's own process: exit 2 before anything
// is built or created, naming the flag and the backend.
func TestPreserveRefusedWithUserspaceLinks(t *testing.T) {
	testenv.NeedRoot(t)
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	cmd := exec.Command(bin, "run", zonesManifest(t, "10.213.229.0/24"), "--preserve", "--output", out)
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Fatalf("run --preserve with userspace links: %v, want exit %d\n%s", err, exitUsage, msg)
	}
	for _, want := range []string{"--preserve", "userspace", "benchnet up"} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a refused run created %d entries in the output directory", len(entries))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestExecdCommandsHaveAPackage: every host command a run or the tests exec
// can be installed by the dependency step, and a run does not require what
// only the tests use.
func TestExecdCommandsHaveAPackage(t *testing.T) {
	// iptables: the firewall rule where br_netfilter is on; tc: the netem backend.
	all := append(append([]string{"iptables", "tc"}, runCommands()...), testCommands...)
	for _, c := range all {
		if deps.Packages[c] == "" {
			t.Errorf("command %s is exec'd but deps knows no package for it", c)
		}
	}
	if slices.Contains(runCommands(), "ping") {
		t.Errorf("run requires ping, which only the tests use: %v", runCommands())
	}
	if !slices.Contains(testCommands, "ping") {
		t.Errorf("setup --tests does not install ping: %v", testCommands)
	}
}

// checkStatus: `benchnet status RUN_DIR` of a live CometBFT testnet shows
// the columns its driver gives (node.Statuser) and, for every node, a
// height it reached, that it is not catching up, and no error.
func checkStatus(t *testing.T, bin, runDir string) {
	t.Helper()
	out, err := exec.Command(bin, "status", runDir).CombinedOutput()
	if err != nil {
		t.Fatalf("benchnet status: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("status printed no node rows:\n%s", out)
	}
	if head := strings.Fields(lines[1]); strings.Join(head, " ") != "NODE ADDRESS HEIGHT PEERS MEMPOOL CATCHING_UP PID RSS ERROR" {
		t.Fatalf("status header %q:\n%s", lines[1], out)
	}
	for _, row := range lines[2:] {
		f := strings.Fields(row)
		if len(f) < 8 {
			t.Errorf("status row %q: want every column and no error", row)
			continue
		}
		if h, err := strconv.Atoi(f[2]); err != nil || h < 1 {
			t.Errorf("status row %q: height %q, want one the node reached", row, f[2])
		}
		if f[5] != "false" {
			t.Errorf("status row %q: catching_up %q, want false", row, f[5])
		}
	}
}
