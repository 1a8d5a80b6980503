package testnet

import (
	"context"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestUniformDelayUp brings 2 validators up with [network].delay = "40ms"
// through the userspace link emulator and checks by ping between their
// namespaces that the RTT is 2 x 40 ms in both directions: the uniform
// condition reaches every link, each way.
func TestUniformDelayUp(t *testing.T) {
	needRelease(t, "v1.0.1")
	testenv.NeedCommand(t, "ping", "iputils-ping")
	m, err := manifest.Parse("uniform-test.toml", []byte(`
name = "uniformtest"
[network]
subnet = "10.213.238.0/24"
delay = "40ms"
linkem = "userspace"
[node.validator]
count = 2
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 60 * time.Second, Log: testenv.LogWriter(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Down(context.Background()) })
	rtt := regexp.MustCompile(`time=([0-9.]+) ms`)
	const wantMs = 80.0
	for _, pair := range [][2]int{{0, 1}, {1, 0}} {
		a, b := tn.Plan.Nodes[pair[0]], tn.Plan.Nodes[pair[1]]
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", local.NetnsName(tn.RunID, a.Name),
			"ping", "-c", "10", "-i", "0.05", "-W", "2", b.Addr.String()).CombinedOutput()
		if err != nil {
			t.Fatalf("ping %s -> %s: %v\n%s", a.Name, b.Name, err, out)
		}
		var ms []float64
		for _, m := range rtt.FindAllSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			ms = append(ms, v)
		}
		if len(ms) < 8 {
			t.Fatalf("ping %s -> %s: %d replies of 10\n%s", a.Name, b.Name, len(ms), out)
		}
		sort.Float64s(ms)
		fastest, median := ms[0], ms[len(ms)/2]
		t.Logf("%s -> %s: RTT min %.2f median %.2f ms, want 2 x 40 ms = %.0f ms", a.Name, b.Name, fastest, median, wantMs)
		if fastest < wantMs-1 || fastest > wantMs+2 {
			t.Errorf("%s -> %s: fastest RTT %.2f ms, want within 2 ms above %.0f ms", a.Name, b.Name, fastest, wantMs)
		}
		if median > wantMs*1.15+2 {
			t.Errorf("%s -> %s: median RTT %.2f ms, more than 15%% above %.0f ms", a.Name, b.Name, median, wantMs)
		}
	}
}
