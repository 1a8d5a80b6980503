package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/testnet"
)

// fit applies the large-testnet defaults, estimates what the testnet needs
// and refuses (exit 2, with the numbers) when it cannot fit on this machine,
// unless --force. Unless --ready-timeout was given, the ready timeout scales
// with the testnet. Nothing has been created yet when it refuses.
func (f *upFlags) fit(cmd *cobra.Command, m *manifest.Manifest, log io.Writer) error {
	// The runner's engine first: nothing to estimate for a runner that
	// cannot start.
	if infra.Caps(m.Infra.Runner).Engine && !dockercli.Default.Available(cmd.Context()) {
		return fmt.Errorf("runner %s: no Docker engine answers `docker version` (install docker.io and start dockerd, or use --runner local)", m.Infra.Runner)
	}
	notes := capacity.LargeDefaults(m)
	if len(notes) > 0 {
		if errs := m.Validate(); len(errs) > 0 {
			return usageError{errs}
		}
		fmt.Fprintf(log, "large testnet: defaults applied (set them in the manifest to choose otherwise):\n")
		for _, n := range notes {
			fmt.Fprintf(log, "  %s\n", n)
		}
	}
	p, err := plan.Resolve(m)
	if err != nil {
		return usageError{err}
	}
	mach, err := capacity.ThisMachine()
	if err != nil {
		return err
	}
	where := "this machine"
	// A cluster runner's nodes run on its machines: their sizes as their
	// engines report them (a swarm: docker info's NCPU and MemTotal).
	if have, err := infra.Machines(cmd.Context(), m.Infra.Runner); err == nil && len(have) > 0 {
		var ms []capacity.Machine
		for _, h := range have {
			ms = append(ms, capacity.Machine{Cores: h.NCPU, MemAvail: h.MemBytes})
		}
		mach = capacity.Cluster(ms)
		where = fmt.Sprintf("this %s cluster (%d machines)", m.Infra.Runner, len(have))
	}
	e := capacity.Need(p, m.Infra.Runner).Fit(mach)
	fmt.Fprintf(log, "capacity: %s; %s: %d cores, %d MiB available\n", e, where, mach.Cores, mach.MemAvail>>20)
	if err := capacity.Check(e, mach); err != nil {
		if where != "this machine" {
			err = fmt.Errorf("%s is too small: %w (`benchnet plan --runner %s --machine <size>` says how many machines it needs)", where, err, m.Infra.Runner)
		}
		if !f.force {
			return usageError{err}
		}
		fmt.Fprintf(log, "--force: starting anyway: %v\n", err)
	}
	if !cmd.Flags().Changed("ready-timeout") {
		if d := capacity.ReadyTimeout(f.timeout, e); d != f.timeout {
			fmt.Fprintf(log, "ready timeout %s for %d nodes (--ready-timeout to choose)\n", d, e.Nodes)
			f.timeout = d
		}
	}
	return nil
}

// measureIdle caches the idle cost of a release's node the first time a
// testnet of one release comes up here; later estimates use it.
func measureIdle(t *testnet.Testnet, log io.Writer) {
	rels := map[string]bool{}
	peers := 0
	for _, n := range t.Plan.Nodes {
		rels[n.Release.String()] = true
		peers += len(n.PersistentPeers)
	}
	if len(rels) != 1 {
		return
	}
	rel := t.Plan.Nodes[0].Release.String()
	if !capacity.Lookup(rel).Measured.IsZero() {
		return
	}
	var pids []int
	for _, pid := range t.PIDs() {
		pids = append(pids, pid)
	}
	time.Sleep(2 * time.Second) // past the start-up burst
	p, err := capacity.Measure(rel, pids, float64(peers)/float64(len(t.Plan.Nodes)), 3*time.Second)
	if err == nil {
		err = capacity.Save(p)
	}
	if err != nil {
		fmt.Fprintf(log, "note: idle cost of %s not measured: %v\n", rel, err)
		return
	}
	fmt.Fprintf(log, "measured idle %s node: %.3f cores, %d MiB (cached for capacity estimates)\n", rel, p.CPU, p.RSS>>20)
}
