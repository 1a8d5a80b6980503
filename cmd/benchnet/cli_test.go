package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
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
		{[]string{"build", "tendermint@v0.35.9"}, exitUsage},
		{[]string{"plan", "../../examples/tendermint.toml"}, exitOK},
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
	want := `invalid flag --rate: must be positive (tx/s per connection), at most 100000, got 0; --size: 10 bytes is too small for the "kv" payload: want at least 48`
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
func benchnetBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "benchnet-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "benchnet")
		// No VCS stamp: a checkout owned by another user (git's
		// safe.directory) must still build for the fast tier.
		// Static (CGO_ENABLED=0): the gossip hosts on docker and swarm
		// run this binary in a FROM scratch image.
		build := exec.Command("go", "build", "-buildvcs=false", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
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
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
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
			pids = proctable.NodePIDs(filepath.Join(runDir, "state.json"))
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
	a, err := proctable.ActiveRuns()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// badManifestBase is a valid testnet; each case appends or replaces a line.
// The group name qzv makes its node names (qzv0…) and so any namespace of
// theirs recognisable; the subnet is one no other test uses.
const badManifestBase = `name = "badin"
seed = 1
[network]
subnet = "10.213.229.0/24"
[node.qzv]
count = 2
`

// TestBadInputRefused: every bad input of issue 9 is refused by the manifest
// validation with exit 2, each problem named with file:line and field (or
// flag), by plan, up and run alike, before anything exists: no run
// directory, no namespace, no process.
func TestBadInputRefused(t *testing.T) {
	cases := []struct {
		name  string
		toml  string            // appended to badManifestBase (with {load} → a [load] header)
		files map[string]string // beside the manifest
		flags []string          // load flags: run only
		want  []string          // {m} → the manifest's path
	}{
		{name: "rate nan", toml: "[load]\nrate = nan\n",
			want: []string{"{m}:8: load.rate: must be positive", "got NaN"}},
		{name: "rate inf", toml: "[load]\nrate = inf\n",
			want: []string{"{m}:8: load.rate:", "got +Inf"}},
		{name: "ramp_from nan", toml: "[load]\nshape = \"ramp\"\nramp_from = nan\n",
			want: []string{"{m}:9: load.ramp_from:", "got NaN"}},
		{name: "ramp_from inf", toml: "[load]\nshape = \"ramp\"\nramp_from = inf\n",
			want: []string{"{m}:9: load.ramp_from:", "got +Inf"}},
		{name: "size 2 GB", toml: "[load]\nsize = 2000000000\n",
			want: []string{"{m}:8: load.size: 2000000000 bytes: at most 1048576"}},
		{name: "3000 nodes", toml: "[node.full]\ncount = 3000\n",
			want: []string{"{m}:8: node.full.count: 3000 nodes: a testnet has at most 256"}},
		{name: "ramp with count and no duration", toml: "[load]\nshape = \"ramp\"\ncount = 1000\n",
			want: []string{"{m}:7: load.duration: a ramp runs over a duration"}},
		{name: "negative and absurd load", toml: "[load]\nduration = \"-5s\"\nconnections = 100000\ngrace = \"-1s\"\n",
			want: []string{"{m}:8: load.duration: -5s", "{m}:9: load.connections: must be 1 to 1000", "{m}:10: load.grace:"}},
		{name: "rate nan flag", flags: []string{"--rate", "NaN"},
			want: []string{"--rate: must be positive", "got NaN"}},
		{name: "rate inf flag", flags: []string{"--rate", "Inf"},
			want: []string{"--rate: must be positive", "got +Inf"}},
		{name: "rate -inf flag", flags: []string{"--rate=-Inf"},
			want: []string{"--rate: must be positive", "got -Inf"}},
		{name: "ramp-from nan flag", flags: []string{"--shape", "ramp", "--ramp-from", "nan"},
			want: []string{"--ramp-from: a ramp starts below rate", "got NaN"}},
		{name: "size flag", flags: []string{"--size", "2000000000"},
			want: []string{"--size: 2000000000 bytes: at most 1048576"}},
		{name: "connections flag", flags: []string{"--connections", "100000"},
			want: []string{"--connections: must be 1 to 1000"}},
	}
	// Cases in [network] must sit in that table: built here, not appended.
	network := func(lines string) string {
		return strings.Replace(badManifestBase, "[network]\n", "[network]\n"+lines, 1)
	}
	type netCase struct {
		name, base, toml string
		files            map[string]string
		want             []string
	}
	netCases := []netCase{
		{name: "jitter banana", base: network("jitter = \"banana\"\n"),
			want: []string{"{m}:4: network.jitter: \"banana\": want a percentage"}},
		{name: "bad loss", base: network("loss = \"12\"\n"),
			want: []string{"{m}:4: network.loss: \"12\": want a percentage"}},
		{name: "bad bandwidth", base: network("bandwidth = \"fast\"\n"),
			want: []string{"{m}:4: network.bandwidth: \"fast\": want a positive rate"}},
		{name: "aws and the default zone", base: network("zones = \"aws\"\n"),
			want: []string{"{m}:6: node.qzv.zone: the default zone \"local\" is not in zone set aws"}},
		{name: "aws and an unknown zone", base: network("zones = \"aws\"\n"), toml: "zone = \"Atlantis\"\n",
			want: []string{"{m}:8: node.qzv.zone: \"Atlantis\" is not in zone set aws"}},
		{name: "zone CSV that does not parse", base: network("zones = \"lat.csv\"\n"), toml: "zone = \"a\"\n",
			files: map[string]string{"lat.csv": "From/to,a,b\na,0,7\nb,seven,0\n"},
			want:  []string{"{m}:4: network.zones: {d}/lat.csv:3: column a: \"seven\" is not a delay in ms"}},
		{name: "zone CSV missing", base: network("zones = \"nowhere.csv\"\n"),
			want: []string{"{m}:4: network.zones: \"nowhere.csv\" is neither a built-in zone set (aws) nor a readable CSV file"}},
	}
	type tcase struct {
		name, content string
		files         map[string]string
		flags, want   []string
	}
	var all []tcase
	for _, c := range cases {
		all = append(all, tcase{c.name, badManifestBase + c.toml, c.files, c.flags, c.want})
	}
	for _, c := range netCases {
		all = append(all, tcase{c.name, c.base + c.toml, c.files, nil, c.want})
	}
	// All problems at once: one run of plan lists every one of them.
	all = append(all, tcase{name: "all at once",
		content: network("jitter = \"banana\"\nzones = \"aws\"\n") + "[load]\nrate = nan\nsize = 2000000000\n",
		want:    []string{"4 problems", "{m}:4: network.jitter", "{m}:7: node.qzv.zone", "{m}:10: load.rate", "{m}:11: load.size"}})

	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mf := filepath.Join(dir, "m.toml")
			if err := os.WriteFile(mf, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			for name, data := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Relative paths in the manifest resolve against its directory,
			// not the working directory.
			t.Chdir(t.TempDir())
			cmds := []string{"plan", "up", "run"}
			if c.flags != nil {
				cmds = []string{"run"} // load flags belong to run (and load)
			}
			for _, cmd := range cmds {
				out := filepath.Join(dir, "runs-"+cmd)
				args := []string{cmd, mf}
				if cmd != "plan" {
					args = append(args, "--output", out)
				}
				args = append(args, c.flags...)
				code, stderr := runCaptured(t, args)
				if code != exitUsage {
					t.Errorf("benchnet %s: exit %d, want %d\n%s", strings.Join(args, " "), code, exitUsage, stderr)
				}
				for _, w := range c.want {
					w = strings.ReplaceAll(strings.ReplaceAll(w, "{m}", mf), "{d}", dir)
					if !strings.Contains(stderr, w) {
						t.Errorf("benchnet %s: output lacks %q:\n%s", cmd, w, stderr)
					}
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("benchnet %s: %s exists (err %v): a run directory was started", cmd, out, err)
				}
				checkNothingStarted(t, dir)
			}
		})
	}
}

// runCaptured runs the CLI in-process and returns its exit code and what it
// wrote to stderr (where errors go).
func runCaptured(t *testing.T, args []string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f
	code := run(args)
	os.Stderr = saved
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(data)
}

// checkNothingStarted: no namespace of a qzv node and no process with a
// path under dir on its command line (node homes live in the run directory).
func checkNothingStarted(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		out, err := exec.Command("ip", "netns", "list").Output()
		if err != nil {
			t.Fatalf("ip netns list: %v", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "-qzv") {
				t.Errorf("namespace created: %s", line)
			}
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		if strings.Split(p, "/")[2] == self {
			continue
		}
		cmdline, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(cmdline), dir) {
			t.Errorf("process %s runs with %s: %q", p, dir, cmdline)
		}
	}
}

// TestRunnerFlagEveryCommand: --runner holds for every command that brings
// testnets up, not only run and up (sweep, soak, compare and qa ignored it
// and ran on local). The socket app is refused on swarm, so each command
// must stop at the manifest's line, with a usage error, before anything
// starts. Without the flag applied, the unwritable --output makes the
// command fail fast rather than start nodes.
func TestRunnerFlagEveryCommand(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "m.toml")
	m := badManifestBase + "app = \"kvstore-socket\"\n[variants.a]\n[variants.b]\n"
	if err := os.WriteFile(mf, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	rot, err := examples.FS.ReadFile("qa-rotate.toml") // the QA's rotating testbed, beside it
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "qa-rotate.toml"), rot, 0o644); err != nil {
		t.Fatal(err)
	}
	builds := []string{"--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--budget", "1s"}
	for _, args := range [][]string{
		{"run", mf},
		{"up", mf},
		{"sweep", mf},
		{"soak", mf},
		{"compare", mf},
		append([]string{"qa", mf}, builds...),
	} {
		t.Run(args[0], func(t *testing.T) {
			args = append(args, "--runner", "swarm", "--output", "/dev/null/runs")
			code, stderr := runCaptured(t, args)
			want := mf + ":7: node.qzv.app: \"kvstore-socket\" runs a second process"
			if code != exitUsage || !strings.Contains(stderr, want) {
				t.Errorf("benchnet %s: exit %d, want %d and %q:\n%s", strings.Join(args, " "), code, exitUsage, want, stderr)
			}
			checkNothingStarted(t, dir)
		})
	}
}

// runLong runs the benchnet binary with args, sends it Ctrl-C past timeout
// (the command keeps what it finished and tears its testnets down, where a
// test timeout would orphan them), logs its last lines, and returns its
// combined output, its wall time and its error: an *exec.ExitError for a
// non-zero exit, anything else fails the test.
func runLong(t *testing.T, timeout time.Duration, args ...string) (string, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, benchnetBinary(t), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 90 * time.Second
	b, err := cmd.CombinedOutput()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	t.Logf("benchnet %s: %v after %s\n%s", args[0], err, wall.Round(time.Second), tail(string(b), 40))
	return string(b), wall, err
}
