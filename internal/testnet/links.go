package testnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// wantsLinkem says whether the plan asks for any link emulation.
func wantsLinkem(p *plan.Testnet) bool {
	n := p.Network
	if n.Linkem == linkem.KindNone {
		return false
	}
	return n.Zones != "" || n.Delay != "" || n.Jitter != "" || n.Loss != "" || n.Bandwidth != "" ||
		n.Linkem == linkem.KindUserspace || n.Linkem == linkem.KindNetem
}

// openLinks builds the link model and opens its backend before the hosts
// exist: the userspace backend must hand the runner its TAPs.
func (t *Testnet) openLinks(ctx context.Context, r infra.Runner, runner string) error {
	p := t.Plan
	if !wantsLinkem(p) {
		return nil
	}
	model, err := linkem.Build(p)
	if err != nil {
		return fmt.Errorf("link emulation: %w", err)
	}
	kind, why := p.Network.Linkem, ""
	if c := infra.Caps(runner); c.AutoLinks != "" && (kind == linkem.KindAuto || kind == "") {
		kind, why = c.AutoLinks, c.AutoLinksWhy
	}
	be, reason, err := linkem.Open(ctx, kind, linkem.Options{
		Netem: linkem.NetemConfig{Netns: func(node string) string { return proctable.NetnsName(t.RunID, node) }},
		// The switch records its lateness into the run directory while it
		// runs (analyze checks it), from a real-time delivery thread.
		Userspace: linkem.UserspaceConfig{RecordDir: t.Dir.Join(rundir.LinkemDir), Realtime: true},
		// The agents beside the nodes (swarm) certify themselves; their
		// records are scraped into the same place.
		Agents: linkem.AgentsConfig{RecordDir: t.Dir.Join(rundir.LinkemDir), Capture: p.Subnet, Endpoint: func(node string) string {
			ep, err := r.Endpoints(node)
			if err != nil {
				return ""
			}
			return ep.Linkem
		}},
	})
	if err != nil {
		return fmt.Errorf("link emulation: %w", err)
	}
	if why != "" {
		reason = why
	}
	t.links, t.model = be, model
	fmt.Fprintf(t.log, "link emulation: %s backend (%s)\n", be.Name(), reason)
	_ = t.Dir.Event(rundir.EventLinkem, "", be.Name()+": "+reason)
	if ports, ok := be.(proctable.PortProvider); ok {
		tu, ok := r.(tapUser)
		if !ok {
			return fmt.Errorf("link emulation: the %s backend needs each node's link through its TAP, which runner %s does not wire", be.Name(), runner)
		}
		tu.UseTAPs(ports)
	}
	if agents, ok := be.(infra.LinkAgents); ok {
		au, ok := r.(infra.LinkAgentUser)
		if !ok {
			return fmt.Errorf("link emulation: the %s backend runs beside each node, which runner %s does not wire", be.Name(), runner)
		}
		au.UseLinkAgents(agents)
	}
	return t.writeLinkInfo(be.Name(), reason, model)
}

// tapUser is a runner that can attach its nodes through the emulator's
// TAPs (local and docker).
type tapUser interface {
	UseTAPs(proctable.PortProvider)
}

// applyLinks installs the model once every host's link exists, and again
// after each change. It is all or nothing: when the backend fails, the model
// gets back the conditions last applied and the backend is applied again
// with them, so model and links agree and no link is left half changed.
func (t *Testnet) applyLinks(ctx context.Context) error {
	if t.links == nil {
		return nil
	}
	t.linksMu.Lock()
	defer t.linksMu.Unlock()
	err := t.links.Apply(ctx, t.model)
	if err == nil {
		t.applied, t.everApplied = t.model.Save(), true
		return nil
	}
	err = fmt.Errorf("link emulation: apply: %w", err)
	if !t.everApplied {
		return err // Up fails and removes the links with the hosts
	}
	t.model.Restore(t.applied)
	if rerr := t.links.Apply(context.WithoutCancel(ctx), t.model); rerr != nil {
		return fmt.Errorf("%w; rollback to the previous conditions failed, links may be mixed: %w", err, rerr)
	}
	if errors.Is(err, linkem.ErrRolledBack) {
		return err
	}
	return fmt.Errorf("%w; %w", err, linkem.ErrRolledBack)
}

// Links returns the link model and backend (nil when not emulated), so
// scenarios can change conditions during a run: change the model, then
// call ApplyLinks.
func (t *Testnet) Links() *linkem.Model { return t.model }

// ApplyLinks pushes the model's current conditions to the backend, all or
// nothing: on error (wrapping ErrLinksRolledBack when the rollback worked)
// the model and the links are back at the conditions of the last successful
// apply, so the change can be retried or reported.
func (t *Testnet) ApplyLinks(ctx context.Context) error { return t.applyLinks(ctx) }

// LinkBackend says, before anything is created, which link-emulation backend
// Up would pick for m and why ("" when links are not emulated). Callers use
// it to refuse what a backend cannot do (the userspace emulator lives in the
// harness, so its links cannot outlive it). "auto" probes the kernel the way
// Up does, in a throwaway namespace.
func LinkBackend(ctx context.Context, m *manifest.Manifest) (kind, reason string, err error) {
	p, err := plan.Resolve(m)
	if err != nil {
		return "", "", err
	}
	if !wantsLinkem(p) {
		return "", "", nil
	}
	kind, reason = p.Network.Linkem, "set by [network].linkem"
	if c := infra.Caps(m.Infra.Runner); c.AutoLinks != "" && (kind == linkem.KindAuto || kind == "") {
		return c.AutoLinks, c.AutoLinksWhy, nil
	}
	if kind == linkem.KindAuto || kind == "" {
		kind, reason = linkem.Detect(ctx)
	}
	return kind, reason, nil
}

// LinksInProcess says whether the link emulation lives in this process (the
// userspace switch): the testnet then works only while this process runs.
func (t *Testnet) LinksInProcess() bool {
	_, ok := t.links.(*linkem.Userspace)
	return ok
}

// closeLinks saves the emulator's counters and removes what it installed.
func (t *Testnet) closeLinks() error {
	if t.links == nil {
		return nil
	}
	if u, ok := t.links.(*linkem.Userspace); ok {
		_ = u.WriteMetricsFile(t.Dir.Join(rundir.LinkemDir, rundir.LinkemCountersFile))
	}
	return t.links.Close()
}

func (t *Testnet) writeLinkInfo(backend, reason string, m *linkem.Model) error {
	n := t.Plan.Network
	if err := t.Dir.WriteLinkemInfo(&rundir.LinkemInfo{Backend: backend, Reason: reason, Zones: n.Zones, Jitter: n.Jitter, Loss: n.Loss, Bandwidth: n.Bandwidth}); err != nil {
		return err
	}
	if m.Matrix == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := m.Matrix.WriteCSV(&buf); err != nil {
		return err
	}
	return t.Dir.WriteFile(filepath.Join(rundir.LinkemDir, rundir.LinkemMatrixFile), buf.Bytes())
}
