package testnet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/docker"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestConformance is the one suite every runner passes (as litestream runs
// one suite on every replica client): up, every node's endpoints, a load
// committed through every node, kill and restart, pause and resume, and
// down leaving nothing of the run. `down` after a kill -9 of the harness
// is the CLI's (cmd/benchnet: TestDockerKill9ThenDown, TestSwarmKill9ThenDown,
// TestSwarmMultiEngine, and TestKill9ThenDown for the local runner).
func TestConformance(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		needRelease(t, "v1.0.1")
		conformance(t, "10.213.224.0/24", "local", nil, func(runID string) []string {
			out, _ := exec.Command("ip", "netns", "list").Output()
			var left []string
			for _, f := range strings.Fields(string(out)) {
				if strings.HasPrefix(f, "bn-"+runID+"-") {
					left = append(left, "netns "+f)
				}
			}
			return left
		})
	})
	t.Run("docker", func(t *testing.T) {
		needRelease(t, "v1.0.1")
		needEngine(t)
		conformance(t, "10.213.225.0/24", "docker", nil, labelledOn(dockercli.Default))
	})
	t.Run("swarm-1", func(t *testing.T) {
		needRelease(t, "v1.0.1")
		needEngine(t)
		if !docker.SwarmActive(context.Background()) {
			if b, err := exec.Command("docker", "swarm", "init", "--advertise-addr", "127.0.0.1").CombinedOutput(); err != nil {
				t.Fatalf("docker swarm init: %v\n%s", err, b)
			}
			t.Cleanup(func() { _ = exec.Command("docker", "swarm", "leave", "--force").Run() })
		}
		conformance(t, "10.213.226.0/24", "swarm", nil, labelledOn(dockercli.Default))
	})
	t.Run("swarm-3", func(t *testing.T) {
		needRelease(t, "v1.0.1")
		c := swarmtest.New(t, swarmtest.Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})
		engines := []dockercli.Engine{dockercli.Default}
		for _, h := range c.Hosts() {
			engines = append(engines, dockercli.Engine{Host: h})
		}
		conformance(t, "10.213.227.0/24", "swarm", c.Hosts(), labelledOn(engines...))
	})
}

func needEngine(t *testing.T) {
	t.Helper()
	if !docker.Available(context.Background()) {
		testenv.Skip(t, "no Docker engine answers `docker version` (install docker.io and start dockerd)")
	}
}

// labelledOn lists the run's labelled objects left on the engines.
func labelledOn(engines ...dockercli.Engine) func(runID string) []string {
	return func(runID string) []string {
		ctx := context.Background()
		var left []string
		for _, e := range engines {
			what := [][]string{{"ps", "--all"}, {"network", "ls"}, {"volume", "ls"}}
			if e.IsDefault() && e.SwarmActive(ctx) {
				what = append(what, []string{"service", "ls"})
			}
			for _, w := range what {
				out, err := e.Cmd(ctx, append(append([]string{}, w...), "--quiet", "--filter", "label="+dockercli.Label+"="+runID)...)
				if err != nil {
					left = append(left, fmt.Sprintf("%s: %v", e, err))
				}
				for _, id := range strings.Fields(string(out)) {
					left = append(left, fmt.Sprintf("%s: %s %s", e, w[0], id))
				}
			}
		}
		return left
	}
}

const conformanceManifest = `name = "conformance"
seed = 1
[network]
subnet = "%s"
[node.validator]
count = 4
release = "cometbft@v1.0.1"
app = "kvstore"
zones = ["z0", "z1", "z2"]
[infra]
runner = "%s"
%s`

func conformance(t *testing.T, subnet, runner string, engines []string, left func(runID string) []string) {
	extra := ""
	if len(engines) > 0 {
		q := make([]string, len(engines))
		for i, e := range engines {
			q[i] = strconv.Quote(e)
		}
		extra = "engines = [" + strings.Join(q, ", ") + "]\n"
	}
	m, err := manifest.Parse("conformance.toml", []byte(fmt.Sprintf(conformanceManifest, subnet, runner, extra)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 90 * time.Second, Log: testenv.LogWriter(t)})
	if err != nil {
		t.Fatal(err)
	}
	down := false
	t.Cleanup(func() {
		if !down {
			_ = tn.Down(context.Background())
		}
	})

	// Endpoints: every node's RPC and metrics answer where the runner says.
	for _, n := range tn.Plan.Nodes {
		ep, err := tn.Runner.Endpoints(n.Name)
		if err != nil || ep.P2P == "" || ep.RPC == "" || ep.Metrics == "" {
			t.Fatalf("endpoints of %s: %+v, %v", n.Name, ep, err)
		}
		if _, err := cometrpc.New(n.RPCURL()).Status(ctx); err != nil {
			t.Errorf("%s RPC at %s: %v", n.Name, n.RPCURL(), err)
		}
		body, err := get(ctx, "http://"+ep.Metrics+"/metrics")
		if err != nil || !strings.Contains(body, "consensus_height") {
			t.Errorf("%s metrics at %s: %v (%d bytes)", n.Name, ep.Metrics, err, len(body))
		}
	}

	// Load: a tx through every node, each committed (broadcast_tx_commit).
	for i, n := range tn.Plan.Nodes {
		if err := commitTx(ctx, n.RPCURL(), fmt.Sprintf("conformance%d=%d", i, i)); err != nil {
			t.Errorf("tx through %s: %v", n.Name, err)
		}
	}

	// Kill, then start again: the node catches up with the others.
	victim := tn.Plan.Nodes[3]
	t.Logf("kill %s, start it again", victim.Name)
	if err := tn.Kill(ctx, victim.Name); err != nil {
		t.Fatalf("kill %s: %v", victim.Name, err)
	}
	if _, err := quickStatus(ctx, victim.RPCURL()); err == nil {
		t.Errorf("%s still answers after kill", victim.Name)
	}
	if err := tn.StartNode(ctx, victim.Name); err != nil {
		t.Fatalf("start %s again: %v", victim.Name, err)
	}
	ref, err := cometrpc.New(tn.Plan.Nodes[0].RPCURL()).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitHeight(ctx, t, victim.Name, victim.RPCURL(), ref.Height)

	// Stop, wipe the home, start again: the node starts from genesis
	// (block sync) and catches up. On a multi-engine swarm the home is a
	// copy on the node's engine, delivered again after the wipe.
	t.Logf("stop %s, wipe its home, start it again", victim.Name)
	if err := tn.StopNode(ctx, victim.Name); err != nil {
		t.Fatalf("stop %s: %v", victim.Name, err)
	}
	if err := tn.Wipe(ctx, victim.Name); err != nil {
		t.Fatalf("wipe %s: %v", victim.Name, err)
	}
	if err := tn.StartNode(ctx, victim.Name); err != nil {
		t.Fatalf("start %s after its wipe: %v", victim.Name, err)
	}
	if ref, err = cometrpc.New(tn.Plan.Nodes[0].RPCURL()).Status(ctx); err != nil {
		t.Fatal(err)
	}
	waitHeight(ctx, t, victim.Name, victim.RPCURL(), ref.Height)

	// Pause: the node stops answering, and answers again once resumed.
	frozen := tn.Plan.Nodes[2]
	t.Logf("pause %s, resume it", frozen.Name)
	if err := tn.Pause(ctx, frozen.Name); err != nil {
		t.Fatalf("pause %s: %v", frozen.Name, err)
	}
	if _, err := quickStatus(ctx, frozen.RPCURL()); err == nil {
		t.Errorf("%s answers while paused", frozen.Name)
	}
	if err := tn.Resume(ctx, frozen.Name); err != nil {
		t.Fatalf("resume %s: %v", frozen.Name, err)
	}
	waitHeight(ctx, t, frozen.Name, frozen.RPCURL(), ref.Height)

	// Down: nothing of the run is left, the state file records nothing.
	runID := tn.RunID
	if err := tn.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	down = true
	if s, err := statefile.Read(tn.Dir.Join(rundir.State)); err == nil && len(s.Doc.Resources) > 0 {
		t.Errorf("state.json still records %d resources after down", len(s.Doc.Resources))
	}
	if l := left(runID); len(l) > 0 {
		t.Errorf("left after down: %v", l)
	}
}

func get(ctx context.Context, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("HTTP %s", resp.Status)
	}
	return string(b), err
}

// commitTx sends tx with broadcast_tx_commit and checks both results.
func commitTx(ctx context.Context, rpcURL, tx string) error {
	body, err := get(ctx, strings.TrimSuffix(rpcURL, "/")+"/broadcast_tx_commit?tx="+url.QueryEscape(strconv.Quote(tx)))
	if err != nil {
		return fmt.Errorf("%v: %s", err, body)
	}
	var r struct {
		Result struct {
			CheckTx  struct{ Code int } `json:"check_tx"`
			TxResult struct{ Code int } `json:"tx_result"`
			Height   string
		}
		Error any
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return fmt.Errorf("decode %q: %w", body, err)
	}
	if r.Error != nil || r.Result.CheckTx.Code != 0 || r.Result.TxResult.Code != 0 || r.Result.Height == "" || r.Result.Height == "0" {
		return fmt.Errorf("not committed: %s", body)
	}
	return nil
}

func quickStatus(ctx context.Context, rpcURL string) (*cometrpc.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	return cometrpc.New(rpcURL).Status(ctx)
}

// waitHeight waits (up to 90 s) until the node reports height h or more.
func waitHeight(ctx context.Context, t *testing.T, name, rpcURL string, h int64) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		st, err := quickStatus(ctx, rpcURL)
		if err == nil && st.Height >= h {
			return
		}
		last = fmt.Sprint(st, err)
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("%s not at height %d within 90 s (last: %s)", name, h, last)
}
