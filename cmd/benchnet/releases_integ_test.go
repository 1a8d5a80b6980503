package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

// patchSleep is what the test's patch adds before every block's commit.
// Longer than v1.0.1's timeout_commit (1s): in block execution, which
// overlaps that wait, 700ms raised the median interval by only ~0.3s;
// 2s sets the pace.
const patchSleep = 2 * time.Second

// TestLocalTreeRelease copies CometBFT v1.0.1's source out of the module
// cache into a git repository, commits it, patches block execution with a
// fixed sleep (uncommitted), builds the tree as a release reference and runs
// the quickstart on it: the provenance names the commit and "dirty", the
// block interval shows the sleep, a second build is a cache hit, an edit
// rebuilds. Then the built binary runs as a file: reference.
func TestLocalTreeRelease(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommand(t, "git", "git")
	bin := benchnetBinary(t)
	work := t.TempDir()
	tree := copyCometBFTTree(t, work)
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", tree, "-c", "user.name=benchnet", "-c", "user.email=t@benchnet", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "CometBFT v1.0.1 from the module zip")
	commit := git("rev-parse", "HEAD")

	// The patch: a fixed sleep before every block's commit (uncommitted).
	patchBlockSleep(t, tree, patchSleep)

	build := func(ref string) (rel, out string, took time.Duration) {
		t.Helper()
		start := time.Now()
		cmd := exec.Command(bin, "build", ref)
		cmd.Dir = work
		b, err := cmd.CombinedOutput()
		took = time.Since(start)
		if err != nil {
			t.Fatalf("benchnet build %s: %v:\n%s", ref, err, b)
		}
		m := regexp.MustCompile(`(?m)^(cometbft@\S+) cometbft: (built|cache hit) in`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("benchnet build %s printed no summary:\n%s", ref, b)
		}
		t.Logf("build %s: %s %s in %s", ref, m[1], m[2], took.Round(time.Millisecond))
		return m[1], m[2], took
	}
	rel1, how, _ := build("./cometbft")
	if !strings.HasPrefix(rel1, "cometbft@v1.0.1+tree.") {
		t.Fatalf("release %s, want cometbft@v1.0.1+tree.<key>", rel1)
	}
	rel2, how2, _ := build("path:cometbft")
	if rel2 != rel1 || how2 != "cache hit" {
		t.Errorf("second build of the unchanged tree: %s %s, want %s cache hit (first: %s)", rel2, how2, rel1, how)
	}

	// The quickstart on the tree, a short load.
	m := quickstartVariant(t, "10.213.236.0/24", "8s")
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"cometbft@v1.0.1"`), []byte(strconv.Quote(tree)), 1)
	if err := os.WriteFile(m, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.OutputDir(t)
	if b, err := exec.Command(bin, "run", m, "--rate", "50", "--warmup", "5s", "--grace", "10s", "--output", out).CombinedOutput(); err != nil {
		t.Fatalf("benchnet run on the tree: %v:\n%s", err, b)
	}
	dir := onlyRunDir(t, out)
	prov, err := os.ReadFile(filepath.Join(dir, "provenance", rel1+"-cometbft.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reference: " + tree, "kind: tree", "vcs.revision: " + commit, "vcs.dirty: true", "vcs.diff.sha256: ", "content.sha256: ", "sha256: ", "build: go build -trimpath"} {
		if !strings.Contains(string(prov), want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), commit[:12]+" dirty") {
		t.Errorf("report.md's Releases table does not show the commit and dirty state")
	}
	// The same quickstart on the v1.0.1 tag (the tree's unpatched source):
	// the patch's sleep sets the patched tree's pace.
	stock := bytes.Replace(data, []byte(strconv.Quote(tree)), []byte(`"cometbft@v1.0.1"`), 1)
	stock = bytes.Replace(stock, []byte(`"10.213.236.0/24"`), []byte(`"10.213.238.0/24"`), 1)
	sm := filepath.Join(work, "stock.toml")
	if err := os.WriteFile(sm, stock, 0o644); err != nil {
		t.Fatal(err)
	}
	outStock := testenv.OutputDir(t)
	if b, err := exec.Command(bin, "run", sm, "--rate", "50", "--warmup", "5s", "--grace", "10s", "--output", outStock).CombinedOutput(); err != nil {
		t.Fatalf("benchnet run on cometbft@v1.0.1: %v:\n%s", err, b)
	}
	base := medianInterval(t, filepath.Join(onlyRunDir(t, outStock), "blocks.csv"))
	iv := medianInterval(t, filepath.Join(dir, "blocks.csv"))
	t.Logf("median block interval: stock v1.0.1 %s, patched tree (%s sleep per block) %s", base, patchSleep, iv)
	if iv < patchSleep || iv-base < patchSleep-time.Second-250*time.Millisecond {
		t.Errorf("median block interval %s (stock %s): the patch's %s sleep does not show", iv, base, patchSleep)
	}

	// One edited file is a different release, rebuilt.
	f, err := os.OpenFile(filepath.Join(tree, "version", "version.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n// edited by the test\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rel3, how3, _ := build("./cometbft")
	if rel3 == rel1 || how3 != "built" {
		t.Errorf("after an edit: %s %s, want a new release, built (was %s)", rel3, how3, rel1)
	}

	// The same binary as a prebuilt file: reference.
	cached := filepath.Join(os.Getenv("HOME"), ".cache", "benchnet", "bin", rel1, "cometbft")
	if d := os.Getenv("BENCHNET_CACHE"); d != "" {
		cached = filepath.Join(d, "bin", rel1, "cometbft")
	}
	fileBin := filepath.Join(work, "my-cometbft")
	if out, err := exec.Command("cp", cached, fileBin).CombinedOutput(); err != nil {
		t.Fatalf("copy the built binary: %v: %s", err, out)
	}
	m2 := bytes.Replace(data, []byte(strconv.Quote(tree)), []byte(strconv.Quote("file:"+fileBin)), 1)
	m2 = bytes.Replace(m2, []byte(`"10.213.236.0/24"`), []byte(`"10.213.237.0/24"`), 1)
	mf := filepath.Join(work, "file.toml")
	if err := os.WriteFile(mf, m2, 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := testenv.OutputDir(t)
	if b, err := exec.Command(bin, "up", mf, "--output", out2).CombinedOutput(); err != nil {
		t.Fatalf("benchnet up on a file: reference: %v:\n%s", err, b)
	}
	dir2 := onlyRunDir(t, out2)
	if b, err := exec.Command(bin, "down", dir2).CombinedOutput(); err != nil {
		t.Errorf("benchnet down: %v:\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join(dir2, "provenance", "cometbft@v1.0.1+file.*-cometbft.txt"))
	if len(files) != 1 {
		t.Fatalf("provenance of the file: release: %v", files)
	}
	fp, _ := os.ReadFile(files[0])
	sum := regexp.MustCompile(`(?m)^source\.sha256: ([0-9a-f]{64})$`).FindSubmatch(fp)
	bsum := regexp.MustCompile(`(?m)^sha256: ([0-9a-f]{64})$`).FindSubmatch(fp)
	if sum == nil || bsum == nil || !bytes.Equal(sum[1], bsum[1]) || !strings.Contains(string(fp), "reference: file:"+fileBin) || !strings.Contains(string(fp), "static: true") {
		t.Errorf("file: provenance (want the reference, the source's sha256 equal to the cached binary's, static):\n%s", fp)
	}
}

// medianInterval is the median time between consecutive blocks of blocks.csv.
func medianInterval(t *testing.T, path string) time.Duration {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var times []int64
	for _, r := range rows[1:] {
		ns, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil {
			t.Fatalf("blocks.csv: %v", err)
		}
		times = append(times, ns)
	}
	if len(times) < 5 {
		t.Fatalf("blocks.csv has %d blocks: too few to judge the interval", len(times))
	}
	var d []int64
	for i := 1; i < len(times); i++ {
		d = append(d, times[i]-times[i-1])
	}
	slices.Sort(d)
	return time.Duration(d[len(d)/2])
}
