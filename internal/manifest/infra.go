package manifest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/infra/caps"
)

// Runners are the values of [infra].runner.
var Runners = []string{"local", "docker", "swarm"}

// DefaultRunner hosts nodes in network namespaces on this machine.
const DefaultRunner = "local"

// Infra is the [infra] table: which runner hosts the nodes and what each
// node may use there.
type Infra struct {
	// Runner is "local" (network namespaces), "docker" (one container per
	// node on a user-defined bridge network) or "swarm" (one Docker Swarm
	// service per node on an overlay network).
	Runner string `toml:"runner" json:"runner"`
	// CPUs limits every node's container to this many CPUs (docker
	// --cpus); 0 = no limit.
	CPUs float64 `toml:"cpus" json:"cpus,omitempty"`
	// Memory limits every node's container ("512m", "1g"; docker
	// --memory); "" = no limit.
	Memory string `toml:"memory" json:"memory,omitempty"`
	// Engines are the Docker engines of a swarm's machines, for the swarm
	// runner to load images into and clean up on: DOCKER_HOST values
	// ("ssh://user@w1", "tcp://…", "unix://…") or docker context names.
	// Each is matched to its swarm node by the node id its `docker info`
	// reports; the user's docker contexts are searched as well.
	Engines []string `toml:"engines" json:"engines,omitempty"`
}

// WithRunner sets [infra] runner as the command line's --runner does, and
// renders Raw again from the result, so the manifest.toml that a run or an
// experiment directory keeps (and a resume reads back) says where it ran.
// The caller validates.
func (m *Manifest) WithRunner(runner string) error {
	if m.Infra.Runner == runner {
		return nil
	}
	m.Infra.Runner = runner
	raw, err := m.render(fmt.Sprintf("# %s, with --runner %s\n", m.File, runner))
	if err != nil {
		return fmt.Errorf("%s: render with runner %s: %w", m.File, runner, err)
	}
	m.Raw = raw
	return nil
}

func (m *Manifest) applyInfraDefaults() {
	if m.Infra.Runner == "" {
		m.Infra.Runner = DefaultRunner
	}
}

// validateInfra checks [infra]; the runner-specific refusals (what a
// runner cannot do with this manifest) are here too, so they point at a line
// before anything is created. They come from the runner's capabilities
// record (caps), which the runner declares when it is built into the binary;
// a binary without runners (a unit test of a layer above) checks the name
// only.
func (m *Manifest) validateInfra(add func(field, format string, args ...any)) {
	in := &m.Infra
	if !slices.Contains(Runners, in.Runner) {
		add("infra.runner", "%q: want one of %s", in.Runner, quoteAll(Runners))
		return
	}
	if in.CPUs < 0 || in.CPUs > 1024 {
		add("infra.cpus", "%v: want a number of CPUs in (0, 1024], or 0 for no limit", in.CPUs)
	}
	if in.Memory != "" {
		if _, err := ParseMemory(in.Memory); err != nil {
			add("infra.memory", "%v", err)
		}
	}
	for i, e := range in.Engines {
		if strings.TrimSpace(e) == "" || strings.ContainsAny(e, " \t\n") {
			add("infra.engines", "entry %d %q: want a DOCKER_HOST value (ssh://, tcp://, unix://) or a docker context name", i, e)
		}
	}
	rc, declared := caps.Of(in.Runner)
	if !declared {
		return
	}
	if !rc.Limits && (in.CPUs != 0 || in.Memory != "") {
		f := "infra.cpus"
		if in.CPUs == 0 {
			f = "infra.memory"
		}
		add(f, "per-node limits need a runner that enforces them (%s): set infra.runner to one or remove the limit", orList(caps.Where(func(r caps.Record) bool { return r.Limits })))
	}
	if !rc.Engines && len(in.Engines) > 0 {
		add("infra.engines", "engines are the machines of a runner that drives several (%s): set infra.runner to one or remove them", orList(caps.Where(func(r caps.Record) bool { return r.Engines })))
	}
	nw := &m.Network
	canLink := caps.Where(func(r caps.Record) bool { return len(r.Links) > 0 })
	if len(rc.Links) == 0 {
		for _, f := range []struct{ field, v string }{
			{"network.zones", nw.Zones}, {"network.delay", nw.Delay}, {"network.jitter", nw.Jitter},
			{"network.loss", nw.Loss}, {"network.bandwidth", nw.Bandwidth},
		} {
			if f.v != "" && f.v != "0" && f.v != "0%" && f.v != "0ms" {
				add(f.field, "link emulation is not supported by runner %q yet (only %s): remove it or use another infra.runner", in.Runner, orList(canLink))
			}
		}
	} else if nw.Linkem != "" && nw.Linkem != "auto" && !rc.CanLink(nw.Linkem) {
		add("network.linkem", "linkem = %q is not supported by runner %q yet: use %s or \"auto\"", nw.Linkem, in.Runner, orList(quoteEach(rc.Links)))
	}
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name
		if s := SchemaOf(g.Kind); s.Runs != nil && !s.Runs(rc) {
			add(f+".kind", "kind = %q is not supported by runner %q yet: use infra.runner = %s", g.Kind, in.Runner, orList(quoteEach(caps.Where(s.Runs))))
		}
		// The socket app and the accounts app each run beside the node.
		if !rc.Sidecars && (g.App == "kvstore-socket" || g.App == AppAccounts) {
			add(f+".app", "%q runs a second process in the node's network namespace, which runner %q cannot host: use app = \"kvstore\", or infra.runner = %s", g.App, in.Runner, orList(quoteEach(caps.Where(func(r caps.Record) bool { return r.Sidecars }))))
		}
	}
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return "none built in"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func quoteEach(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// ParseMemory reads a memory size as docker takes it: a number with an
// optional unit b, k, m or g (binary multiples). It returns bytes.
func ParseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'b':
			t = t[:n-1]
		case 'k':
			mult, t = 1<<10, t[:n-1]
		case 'm':
			mult, t = 1<<20, t[:n-1]
		case 'g':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("memory %q: want a size like \"512m\" or \"2g\"", s)
	}
	if mult*v < 6<<20 {
		return 0, fmt.Errorf("memory %q: below docker's minimum of 6m", s)
	}
	return mult * v, nil
}

func quoteAll(ss []string) string { return strings.Join(quoteEach(ss), ", ") }

// Has reports whether the file itself sets field (a dotted path), as
// opposed to a default.
func (m *Manifest) Has(field string) bool { return m.pos.has(field) }
