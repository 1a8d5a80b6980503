package binaries

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
)

var (
	v034 = release.Release{Name: "cometbft", Version: "v0.34.35"}
	tm   = release.Release{Name: "tendermint", Version: "v0.34.22"}
)

func TestWrapperFor(t *testing.T) {
	for _, tt := range []struct {
		rel     release.Release
		tool    string
		wrapped bool
		pkg     string
	}{
		{v034, "cometbft", true, "github.com/tendermint/tendermint/cmd/cometbft"},
		{v034, "abci-cli", true, "github.com/tendermint/tendermint/abci/cmd/abci-cli"},
		{release.Release{Name: "cometbft", Version: "v0.38.17"}, "cometbft", false, "github.com/cometbft/cometbft/cmd/cometbft"},
		{v101, "cometbft", false, "github.com/cometbft/cometbft/cmd/cometbft"},
		{tm, "cometbft", true, "github.com/tendermint/tendermint/cmd/tendermint"},
		{tm, "abci-cli", true, "github.com/tendermint/tendermint/abci/cmd/abci-cli"},
		{tm, "loadtime-load", true, "github.com/tendermint/tendermint/test/loadtime/cmd/load"},
	} {
		_, ok := WrapperFor(tt.rel)
		pkg, err := Package(tt.rel, tt.tool)
		if ok != tt.wrapped || err != nil || pkg != tt.pkg {
			t.Errorf("%s %s: wrapped %v pkg %q err %v; want %v %q", tt.rel, tt.tool, ok, pkg, err, tt.wrapped, tt.pkg)
		}
	}
}

// A wrapped build runs go mod tidy and go install in a wrapper module and
// records the wrapper's go.mod in the provenance.
func TestEnsureBuildsWrapped(t *testing.T) {
	dir := setup(t)
	var record string
	goCmd, record = fakeGo(t, dir, "cometbft", false, "0")
	var log bytes.Buffer
	bin, err := Ensure(context.Background(), v034, "cometbft", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	env, _ := os.ReadFile(record)
	if !strings.Contains(string(env), "args=install -v github.com/tendermint/tendermint/cmd/cometbft\n") {
		t.Errorf("last go command:\n%s", env)
	}
	prov, _ := os.ReadFile(ProvenancePath(bin))
	for _, want := range []string{"binaries.test", "wrapper module", "require github.com/tendermint/tendermint v0.34.35",
		"replace github.com/tendermint/tendermint => github.com/cometbft/cometbft v0.34.35"} {
		if !strings.Contains(string(prov), want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
}

// Tendermint Core's wrapper requires the module as itself: no replace, and
// the binary (cmd/tendermint) lands under the node's logical tool name.
func TestEnsureBuildsTendermintWrapped(t *testing.T) {
	dir := setup(t)
	var record string
	goCmd, record = fakeGo(t, dir, "tendermint", false, "0")
	var log bytes.Buffer
	bin, err := Ensure(context.Background(), tm, "cometbft", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if bin != Path(tm, "cometbft") {
		t.Errorf("bin %s, want %s", bin, Path(tm, "cometbft"))
	}
	env, _ := os.ReadFile(record)
	if !strings.Contains(string(env), "args=install -v github.com/tendermint/tendermint/cmd/tendermint\n") {
		t.Errorf("last go command:\n%s", env)
	}
	prov, _ := os.ReadFile(ProvenancePath(bin))
	if !strings.Contains(string(prov), "require github.com/tendermint/tendermint v0.34.22") || strings.Contains(string(prov), "replace ") {
		t.Errorf("provenance should show the require and no replace:\n%s", prov)
	}
}

// TestBuildV034Live builds cometbft@v0.34.35 for real into the cache (about
// 40 s here, on a warm module cache; a cache hit after that).
func TestBuildV034Live(t *testing.T) {
	testenv.Integration(t)
	bin, err := Ensure(context.Background(), v034, "cometbft", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0.34.35" {
		t.Fatalf("%s version = %q, %v", bin, out, err)
	}
	prov, _ := Provenance(bin)
	if !strings.Contains(prov, "=>\tgithub.com/cometbft/cometbft\tv0.34.35") {
		t.Errorf("provenance does not show the replace:\n%s", prov)
	}
}

// TestBuildTendermintLive builds Tendermint Core v0.34.22's four tools for
// real into the cache (`setup --tests` builds the node; the other three took
// about a minute here): the node answers 0.34.22 and its provenance names
// the tendermint module itself, without a replace.
func TestBuildTendermintLive(t *testing.T) {
	testenv.Integration(t)
	rel := release.Release{Name: "tendermint", Version: "v0.34.22"}
	for _, tool := range []string{"cometbft", "abci-cli", "loadtime-load", "loadtime-report"} {
		bin, err := Ensure(context.Background(), rel, tool, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		prov, _ := Provenance(bin)
		if !strings.Contains(prov, "\tmod\tgithub.com/tendermint/tendermint\tv0.34.22\t") || strings.Contains(prov, "=>") {
			t.Errorf("%s: provenance does not name the tendermint module without a replace:\n%s", tool, prov)
		}
		if tool == "cometbft" {
			out, err := exec.Command(bin, "version").Output()
			if err != nil || strings.TrimSpace(string(out)) != "0.34.22" {
				t.Fatalf("%s version = %q, %v", bin, out, err)
			}
		}
	}
}
