package testnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/plan"
)

// LinkemDir holds what the link emulation of a run was: the backend, why it
// was chosen, the zone matrix, and (userspace) its packet counters.
const LinkemDir = "linkem"

// wantsLinkem says whether the plan asks for any link emulation.
func wantsLinkem(p *plan.Testnet) bool {
	n := p.Network
	if n.Linkem == linkem.KindNone {
		return false
	}
	return n.Zones != "" || n.Jitter != "" || n.Loss != "" || n.Bandwidth != "" ||
		n.Linkem == linkem.KindUserspace || n.Linkem == linkem.KindNetem
}

// openLinks builds the link model and opens its backend before the hosts
// exist: the userspace backend must hand the runner its TAPs.
func (t *Testnet) openLinks(ctx context.Context, r *local.Runner) error {
	p := t.Plan
	if !wantsLinkem(p) {
		return nil
	}
	model, err := linkem.Build(p)
	if err != nil {
		return fmt.Errorf("link emulation: %w", err)
	}
	be, reason, err := linkem.Open(ctx, p.Network.Linkem, linkem.Options{
		Netem: linkem.NetemConfig{Netns: func(node string) string { return local.NetnsName(t.RunID, node) }},
		// The switch records its lateness into the run directory while it
		// runs (analyze checks it), from a real-time delivery thread.
		Userspace: linkem.UserspaceConfig{RecordDir: t.Dir.Join(LinkemDir), Realtime: true},
	})
	if err != nil {
		return fmt.Errorf("link emulation: %w", err)
	}
	t.links, t.model = be, model
	fmt.Fprintf(t.log, "link emulation: %s backend (%s)\n", be.Name(), reason)
	_ = t.Dir.Event("linkem", "", be.Name()+": "+reason)
	if ports, ok := be.(local.PortProvider); ok {
		r.UseTAPs(ports)
	}
	return t.writeLinkInfo(be.Name(), reason, model)
}

// applyLinks installs the model once every host's link exists.
func (t *Testnet) applyLinks(ctx context.Context) error {
	if t.links == nil {
		return nil
	}
	if err := t.links.Apply(ctx, t.model); err != nil {
		return fmt.Errorf("link emulation: apply: %w", err)
	}
	return nil
}

// Links returns the link model and backend (nil when not emulated), so
// scenarios can change conditions during a run: change the model, then
// call ApplyLinks.
func (t *Testnet) Links() *linkem.Model { return t.model }

// ApplyLinks pushes the model's current conditions to the backend.
func (t *Testnet) ApplyLinks(ctx context.Context) error { return t.applyLinks(ctx) }

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
		_ = u.WriteMetricsFile(t.Dir.Join(LinkemDir, linkem.CountersFile))
	}
	return t.links.Close()
}

func (t *Testnet) writeLinkInfo(backend, reason string, m *linkem.Model) error {
	dir := t.Dir.Join(LinkemDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := t.Plan.Network
	info, err := json.MarshalIndent(linkem.Info{Backend: backend, Reason: reason, Zones: n.Zones, Jitter: n.Jitter, Loss: n.Loss, Bandwidth: n.Bandwidth}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, linkem.InfoFile), info, 0o644); err != nil {
		return err
	}
	if m.Matrix == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := m.Matrix.WriteCSV(&buf); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, linkem.MatrixFile), buf.Bytes(), 0o644)
}
