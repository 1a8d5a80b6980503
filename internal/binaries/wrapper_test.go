package binaries

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
)

var v034 = plan.Release{Name: "cometbft", Version: "v0.34.35"}

func TestWrapperFor(t *testing.T) {
	for _, tt := range []struct {
		rel     plan.Release
		tool    string
		wrapped bool
		pkg     string
	}{
		{v034, "cometbft", true, "github.com/tendermint/tendermint/cmd/cometbft"},
		{v034, "abci-cli", true, "github.com/tendermint/tendermint/abci/cmd/abci-cli"},
		{plan.Release{Name: "cometbft", Version: "v0.38.17"}, "cometbft", false, "github.com/cometbft/cometbft/cmd/cometbft"},
		{v101, "cometbft", false, "github.com/cometbft/cometbft/cmd/cometbft"},
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

// TestBuildV034Live builds cometbft@v0.34.35 for real into the cache (minutes
// on a cold module cache): BENCHNET_LIVE_BUILD=1.
func TestBuildV034Live(t *testing.T) {
	if os.Getenv("BENCHNET_LIVE_BUILD") == "" {
		t.Skip("set BENCHNET_LIVE_BUILD=1 to build cometbft@v0.34.35 for real")
	}
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
