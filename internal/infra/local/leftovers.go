package local

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Leftovers lists the network namespaces and links on this machine whose
// names carry run runID: what the local runner creates besides processes
// (those the caller checks by pid).
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	var left []string
	ns, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("ip netns list: %w", err)
	}
	for _, line := range strings.Split(string(ns), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], runID) {
			left = append(left, "netns "+f[0])
		}
	}
	links, err := exec.CommandContext(ctx, "ip", "-o", "link", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("ip link show: %w", err)
	}
	for _, line := range strings.Split(string(links), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.Contains(f[1], runID) {
			// "veth0@veth1:": the link's own name, without its peer.
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			left = append(left, "link "+name)
		}
	}
	return left, nil
}
