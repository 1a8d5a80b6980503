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

// TestZonesUp brings 3 validators up in 3 AWS zones through the link
// emulator that this kernel supports and checks, by ping between the node
// namespaces, that every pair's RTT is twice the matrix's one-way delay.
func TestZonesUp(t *testing.T) {
	needRelease(t, "v1.0.1")
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("ping (iputils-ping) not installed: run `go run ./cmd/benchnet setup --tests`")
	}
	m, err := manifest.Parse("zones-test.toml", []byte(`
name = "zonestest"
[network]
subnet = "10.213.244.0/24"
zones = "aws"
[node.validator]
count = 3
zones = ["Frankfurt", "Tokyo", "N_Virginia"]
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
	model := tn.Links()
	if model == nil || model.Matrix == nil {
		t.Fatal("zones set but no link model")
	}
	rtt := regexp.MustCompile(`time=([0-9.]+) ms`)
	for _, a := range tn.Plan.Nodes {
		for _, b := range tn.Plan.Nodes {
			if a == b {
				continue
			}
			want := model.Matrix.OneWay(a.Zone, b.Zone) + model.Matrix.OneWay(b.Zone, a.Zone)
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
			// The fastest reply shows the emulated delay with the least
			// scheduling noise (nodes and other tests share 2 cores); the
			// median guards against a delay applied only sometimes.
			fastest, median := ms[0], ms[len(ms)/2]
			wantMs := float64(want.Microseconds()) / 1000
			t.Logf("%s (%s) -> %s (%s): RTT min %.2f median %.2f ms, matrix %.2f ms", a.Name, a.Zone, b.Name, b.Zone, fastest, median, wantMs)
			// iputils prints 3 significant digits above 100 ms: allow 1 ms of rounding below.
			if fastest < wantMs-1 || fastest > wantMs+2 {
				t.Errorf("%s -> %s: fastest RTT %.2f ms, want within 2 ms above %.2f ms", a.Name, b.Name, fastest, wantMs)
			}
			if median > wantMs*1.15+2 {
				t.Errorf("%s -> %s: median RTT %.2f ms, more than 15%% above %.2f ms", a.Name, b.Name, median, wantMs)
			}
		}
	}
}
