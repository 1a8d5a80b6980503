package testnet

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// Leftovers finds what a runner made for a run through the runners' own
// hooks (the local runner's namespaces and links here) and the run's live
// processes, and nothing once they are gone.
func TestLeftoversAskRunners(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommand(t, "ip", "iproute2")
	ctx := context.Background()
	const runID = "f0e1d2"
	ns, link := "bn-"+runID+"-leftover", "bn"+runID+"x"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", link, "type", "veth", "peer", "name", link+"p")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", link).Run() })

	left, err := Leftovers(ctx, runID, []int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"netns " + ns, "link " + link, "link " + link + "p", "process " + strconv.Itoa(os.Getpid())} {
		if !slices.Contains(left, want) {
			t.Errorf("leftovers %q lack %q", left, want)
		}
	}

	ip("netns", "del", ns)
	ip("link", "del", link)
	if left, err := Leftovers(ctx, runID, nil); err != nil || len(left) > 0 {
		t.Errorf("after removal: leftovers %q, err %v; want none", left, err)
	}
}
