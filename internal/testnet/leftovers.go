package testnet

import (
	"context"
	"fmt"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// Leftovers lists what of a run still exists: what each runner built in
// says it created for the run (namespaces and links, containers,
// services, volumes…) and live processes from pids. Tests and `benchnet
// down` use it to prove a teardown complete.
func Leftovers(ctx context.Context, runID string, pids []int) ([]string, error) {
	left, err := infra.Leftovers(ctx, runID)
	for _, pid := range pids {
		if proctable.Running(pid) {
			left = append(left, fmt.Sprintf("process %d", pid))
		}
	}
	return left, err
}
