package testnet

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// Leftovers lists what of a run still exists on the machine: network
// namespaces and links whose names carry the run id, and live processes from
// pids. Tests and `benchnet down` use it to prove a teardown complete.
func Leftovers(ctx context.Context, runID string, pids []int) ([]string, error) {
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
			left = append(left, "link "+strings.TrimSuffix(f[1], ":"))
		}
	}
	for _, pid := range pids {
		if proctable.Running(pid) {
			left = append(left, fmt.Sprintf("process %d", pid))
		}
	}
	return left, nil
}
