package testnet

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/docker"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/testenv"
)

// rootLinks lists the network devices of the root namespace.
func rootLinks(t *testing.T) map[string]bool {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, i := range ifs {
		out[i.Name] = true
	}
	return out
}

// TestDockerLinksDelay brings 2 validators up on runner docker with a 50 ms
// one-way delay: their containers' only link to each other is the userspace
// switch (the validators made blocks through it), a ping from one
// container's namespace to the other's p2p address takes ~100 ms, and down
// leaves no container, network, /run/netns name or TAP behind.
func TestDockerLinksDelay(t *testing.T) {
	testenv.NeedRoot(t)
	if !docker.Available(t.Context()) {
		testenv.Skip(t, "no Docker engine answers `docker version` (install docker.io and start dockerd)")
	}
	needRelease(t, "v1.0.1")
	testenv.NeedCommand(t, "ping", "iputils-ping")
	m, err := manifest.Parse("docker-links.toml", []byte(`
name = "dockerlinks"
[network]
subnet = "10.213.212.0/24"
delay = "50ms"
[node.validator]
count = 2
[infra]
runner = "docker"
`))
	if err != nil {
		t.Fatal(err)
	}
	before := rootLinks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 40 * time.Second, Log: testenv.LogWriter(t)})
	if err != nil {
		t.Fatal(err)
	}
	downed := false
	t.Cleanup(func() {
		if !downed {
			_ = tn.Down(context.Background())
		}
	})
	var taps []string
	for name := range rootLinks(t) {
		if !before[name] {
			taps = append(taps, name)
		}
	}
	if len(taps) == 0 {
		t.Fatal("no new device in the root namespace: the harness has no emulator port")
	}
	a, b := tn.Plan.Nodes[0], tn.Plan.Nodes[1]
	ns := proctable.NetnsName(tn.RunID, a.Name)
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns,
		"ping", "-c", "10", "-i", "0.05", "-W", "2", b.Addr.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping %s -> %s: %v\n%s", a.Name, b.Name, err, out)
	}
	var ms []float64
	for _, m := range regexp.MustCompile(`time=([0-9.]+) ms`).FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		ms = append(ms, v)
	}
	if len(ms) < 8 {
		t.Fatalf("ping %s -> %s: %d replies of 10\n%s", a.Name, b.Name, len(ms), out)
	}
	sort.Float64s(ms)
	fastest, median := ms[0], ms[len(ms)/2]
	t.Logf("docker %s -> %s: RTT min %.2f median %.2f ms, want 100 ms", a.Name, b.Name, fastest, median)
	// iputils prints 3 significant digits above 100 ms.
	if fastest < 99 || fastest > 102 {
		t.Errorf("fastest RTT %.2f ms, want 100 ms (+2)", fastest)
	}
	if median > 117 {
		t.Errorf("median RTT %.2f ms, more than 15%% above 100 ms", median)
	}
	// The node's own eth0 is the TAP with its plan address; there is no
	// docker bridge in the namespace to go around the emulator.
	addrs, err := exec.CommandContext(ctx, "ip", "-n", ns, "-o", "-4", "addr", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("addresses in %s: %v\n%s", ns, err, addrs)
	}
	if !strings.Contains(string(addrs), "eth0    inet "+a.Addr.String()+"/") || strings.Count(string(addrs), "inet ") != 2 {
		t.Errorf("%s: want lo and eth0 with %s only:\n%s", ns, a.Addr, addrs)
	}

	downed = true
	if err := tn.Down(context.Background()); err != nil {
		t.Fatalf("down: %v", err)
	}
	left, err := exec.Command("docker", "ps", "--all", "--quiet", "--filter", "label="+dockercli.Label+"="+tn.RunID).Output()
	if err != nil || len(strings.TrimSpace(string(left))) > 0 {
		t.Errorf("containers left after down (%v): %s", err, left)
	}
	left, err = exec.Command("docker", "network", "ls", "--quiet", "--filter", "label="+dockercli.Label+"="+tn.RunID).Output()
	if err != nil || len(strings.TrimSpace(string(left))) > 0 {
		t.Errorf("networks left after down (%v): %s", err, left)
	}
	for _, n := range tn.Plan.Nodes {
		p := filepath.Join("/run/netns", proctable.NetnsName(tn.RunID, n.Name))
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after down (%v)", p, err)
		}
	}
	now := rootLinks(t)
	for _, tap := range taps {
		if now[tap] {
			t.Errorf("device %s left after down", tap)
		}
	}
}
