package linkem

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Backend installs a Model's conditions on the testnet's links.
//
// Apply is called once after the nodes' links exist and again after every
// change to the model (SetLink, Partition, Heal); conditions change only at
// Apply, whatever the backend. Close removes what the backend installed.
type Backend interface {
	Name() string
	Apply(ctx context.Context, m *Model) error
	Close() error
}

// PortProvider is implemented by backends that own the nodes' links (the
// userspace switch): the runner asks for one TAP per node, created in the
// root namespace, then moves it into the node's namespace
// (`ip link set TAP netns NS`), renames it eth0 and addresses it there. A name
// that is not a node of the model (the harness's own port) gets unemulated
// links.
type PortProvider interface {
	AddPort(name string) (tap string, err error)
}

// Backend names, as in the manifest's [network].linkem.
const (
	KindAuto      = "auto"
	KindNetem     = "netem"
	KindUserspace = "userspace"
	KindNone      = "none"
)

// Options configure Open.
type Options struct {
	// Netem configures the kernel backend (namespaces, device name).
	Netem NetemConfig
	// Userspace configures the switch.
	Userspace UserspaceConfig
	// Agents configures the agent backend (runners whose nodes run apart).
	Agents AgentsConfig
}

// Open resolves kind ("auto" probes the kernel with Detect) and returns the
// backend together with the reason for the choice, for the run's events.
func Open(ctx context.Context, kind string, o Options) (Backend, string, error) {
	reason := "set by [network].linkem"
	if kind == KindAuto || kind == "" {
		kind, reason = Detect(ctx)
	}
	switch kind {
	case KindNetem:
		return NewNetem(o.Netem), reason, nil
	case KindUserspace:
		u, err := NewUserspace(o.Userspace)
		if err != nil {
			return nil, reason, err
		}
		return u, reason, nil
	case KindAgent:
		return NewAgents(o.Agents), reason, nil
	case KindNone:
		return Nop{}, reason, nil
	}
	return nil, reason, fmt.Errorf("linkem: unknown backend %q (want auto, netem, userspace, agent or none)", kind)
}

// Nop is the "none" backend: links are left as they are.
type Nop struct{}

func (Nop) Name() string                        { return KindNone }
func (Nop) Apply(context.Context, *Model) error { return nil }
func (Nop) Close() error                        { return nil }

// Detect reports which backend this machine supports: it adds a netem qdisc
// to the loopback of a throwaway namespace. The reason is meant for the
// user ("kernel has no sch_netem: using userspace backend").
func Detect(ctx context.Context) (backend, reason string) {
	if os.Geteuid() != 0 {
		return KindUserspace, "not root, cannot probe the kernel for sch_netem: using userspace backend"
	}
	ns := "bnt-detect-" + randHex(4)
	if out, err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return KindUserspace, fmt.Sprintf("cannot create a probe namespace (%s): using userspace backend", firstLine(out, err))
	}
	defer run(context.WithoutCancel(ctx), "ip", "netns", "del", ns) //nolint:errcheck // best effort
	if out, err := run(ctx, "ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"); err != nil {
		return KindUserspace, fmt.Sprintf("kernel has no sch_netem (tc: %s): using userspace backend", firstLine(out, err))
	}
	return KindNetem, "kernel has sch_netem: using netem backend"
}

// run execs argv (never through a shell) and returns its combined output.
func run(ctx context.Context, argv ...string) ([]byte, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(buf.String()))
	}
	return buf.Bytes(), err
}

func firstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return err.Error()
	}
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
