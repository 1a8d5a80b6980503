package swarm

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/rundir"
)

// spec is what Start gives a node's service: one source for the engine's
// `service update` and for the stack file a user can read or redeploy.
type spec struct {
	node, service string
	image         string
	// argv is what the task runs: the node's own (nodeArgv), or, when its
	// links are emulated, the link agent's around it.
	argv, nodeArgv []string
	capAdd         []string
	env            []string
	workdir        string
	volumes        []volume
	ports          []int // published in host mode on ports the engine picks
	cpus           float64
	memory         int64
	constraints    []string
}

// volume is a node home (or another directory the node writes): a local
// volume on the engine that runs the task, mounted at the run directory's
// path. Bound to that path when every engine that may run the node is
// this machine's own; otherwise (copied) a plain volume that Start filled
// with the home on each of those engines, so that no shared filesystem
// is needed (docs/swarm.md).
//
// A copied volume of the process's other directories (infra.Process.Dirs:
// what it writes for the run, a gossip host's trace) is out: created empty
// by the engine that runs the task and copied back into the run directory
// when the task has ended (copyBack), never filled.
type volume struct {
	name, path  string
	copied, out bool
}

func (r *Runner) specOf(s *service, proc infra.Process, image string, copied bool) *spec {
	sp := &spec{node: s.node.Name, service: s.name, image: image, argv: proc.Argv, nodeArgv: proc.Argv,
		workdir: proc.Dir, ports: []int{s.node.RPCPort, s.node.PrometheusPort},
		cpus: r.cfg.CPUs, memory: r.cfg.MemoryBytes}
	r.mu.Lock()
	sp.constraints = r.places[s.node.Name]
	r.mu.Unlock()
	home := proc.Dir
	if home == "" {
		home = "/"
	}
	sp.env = append([]string{"HOME=" + home}, proc.Env...)
	for _, d := range proc.Mounts() {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		out := copied && slices.Contains(proc.Dirs, d) && !slices.Contains(proc.ChownDirs, d) && d != proc.Dir
		sp.volumes = append(sp.volumes, volume{name: s.name + "-" + strconv.Itoa(len(sp.volumes)), path: abs, copied: copied, out: out})
	}
	return sp
}

func (v volume) mount(label string) string {
	if v.copied {
		return "type=volume,source=" + v.name + ",target=" + v.path + ",volume-nocopy=true,volume-driver=local,volume-label=" + label
	}
	return "type=volume,source=" + v.name + ",target=" + v.path + ",volume-nocopy=true,volume-driver=local," +
		"volume-opt=type=none,volume-opt=o=bind,volume-opt=device=" + v.path + ",volume-label=" + label
}

// updateArgs turn a service from Setup's placeholder into the node. The CLI
// splits --entrypoint and --args into words itself (no shell runs), so
// each argument is quoted for that split.
func (sp *spec) updateArgs(label string) []string {
	args := []string{"--detach", "--quiet", "--no-resolve-image", "--image", sp.image,
		"--entrypoint", quoteWords(sp.argv[:1]), "--args", quoteWords(sp.argv[1:]),
		"--hostname", sp.node, "--container-label-add", label, "--replicas", "1"}
	if sp.workdir != "" {
		args = append(args, "--workdir", sp.workdir)
	}
	for _, e := range sp.env {
		args = append(args, "--env-add", e)
	}
	for _, v := range sp.volumes {
		args = append(args, "--mount-add", v.mount(label))
	}
	for _, c := range sp.capAdd {
		args = append(args, "--cap-add", c)
	}
	for _, p := range sp.ports {
		args = append(args, "--publish-add", "mode=host,target="+strconv.Itoa(p))
	}
	if sp.cpus > 0 {
		args = append(args, "--limit-cpu", strconv.FormatFloat(sp.cpus, 'f', -1, 64))
	}
	if sp.memory > 0 {
		args = append(args, "--limit-memory", strconv.FormatInt(sp.memory, 10))
	}
	return args
}

// quoteWords quotes words so that a POSIX-style word split (the CLI's
// shlex) returns them unchanged: each in single quotes, a single quote as
// '\”.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// writeStack writes the services configured so far as a stack file beside
// state.json, so `docker stack deploy -c stack.yml <name>` redeploys them.
// Strings are JSON-quoted, which YAML reads as double-quoted scalars.
func (r *Runner) writeStack() error {
	r.stackMu.Lock()
	defer r.stackMu.Unlock()
	r.mu.Lock()
	var specs []*spec
	for _, s := range r.nodes {
		if s.spec != nil {
			specs = append(specs, s.spec)
		}
	}
	p := r.plan
	r.mu.Unlock()
	sort.Slice(specs, func(i, j int) bool { return specs[i].node < specs[j].node })
	q := strconv.Quote
	lbl := func(b *strings.Builder, indent string) {
		fmt.Fprintf(b, "%s%s: %s\n", indent, q(dockercli.Label), q(r.cfg.RunID))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The services of benchnet run %s as deployed by `--runner swarm`.\n", r.cfg.RunID)
	fmt.Fprintf(&b, "# Redeploy: docker stack deploy -c %s benchnet-%s\n", StackFile, r.cfg.RunID)
	b.WriteString("# Peers dial each other by alias (the node's name) on the overlay. A bound home\n# volume is the run directory's path, which must exist at the same path; a\n# copied one was filled with the home on each engine (docker cp) before the start.\n")
	b.WriteString("version: \"3.8\"\nservices:\n")
	for _, sp := range specs {
		fmt.Fprintf(&b, "  %s:\n", q(sp.node))
		fmt.Fprintf(&b, "    image: %s\n    hostname: %s\n", q(sp.image), q(sp.node))
		fmt.Fprintf(&b, "    entrypoint: [%s]\n", q(sp.argv[0]))
		fmt.Fprintf(&b, "    command: [%s]\n", joinQuoted(sp.argv[1:]))
		if sp.workdir != "" {
			fmt.Fprintf(&b, "    working_dir: %s\n", q(sp.workdir))
		}
		fmt.Fprintf(&b, "    environment: [%s]\n", joinQuoted(sp.env))
		if len(sp.capAdd) > 0 {
			fmt.Fprintf(&b, "    cap_add: [%s]\n", joinQuoted(sp.capAdd))
		}
		b.WriteString("    labels:\n")
		lbl(&b, "      ")
		fmt.Fprintf(&b, "    networks:\n      net:\n        aliases: [%s]\n", q(sp.node))
		b.WriteString("    ports:\n")
		for _, pt := range sp.ports {
			fmt.Fprintf(&b, "      - {target: %d, protocol: tcp, mode: host}\n", pt)
		}
		b.WriteString("    volumes:\n")
		for _, v := range sp.volumes {
			fmt.Fprintf(&b, "      - {type: volume, source: %s, target: %s, volume: {nocopy: true}}\n", q(v.name), q(v.path))
		}
		b.WriteString("    deploy:\n      replicas: 1\n      endpoint_mode: dnsrr\n      restart_policy: {condition: none}\n      labels:\n")
		lbl(&b, "        ")
		if len(sp.constraints) > 0 {
			fmt.Fprintf(&b, "      placement: {constraints: [%s]}\n", joinQuoted(sp.constraints))
		}
		if sp.cpus > 0 || sp.memory > 0 {
			b.WriteString("      resources:\n        limits:\n")
			if sp.cpus > 0 {
				fmt.Fprintf(&b, "          cpus: %s\n", q(strconv.FormatFloat(sp.cpus, 'f', -1, 64)))
			}
			if sp.memory > 0 {
				fmt.Fprintf(&b, "          memory: %s\n", q(strconv.FormatInt(sp.memory, 10)))
			}
		}
	}
	b.WriteString("networks:\n  net:\n")
	fmt.Fprintf(&b, "    name: %s\n    driver: overlay\n    attachable: true\n", q(NetworkName(r.cfg.RunID)))
	if p != nil {
		fmt.Fprintf(&b, "    ipam:\n      config:\n        - subnet: %s\n", q(p.Subnet.String()))
	}
	b.WriteString("    labels:\n")
	lbl(&b, "      ")
	b.WriteString("volumes:\n")
	for _, sp := range specs {
		for _, v := range sp.volumes {
			if v.copied {
				fmt.Fprintf(&b, "  %s:\n    driver: local\n    labels:\n", q(v.name))
			} else {
				fmt.Fprintf(&b, "  %s:\n    driver: local\n    driver_opts: {type: none, o: bind, device: %s}\n    labels:\n", q(v.name), q(v.path))
			}
			lbl(&b, "      ")
		}
	}
	return rundir.WriteAtomic(filepath.Join(filepath.Dir(r.cfg.StatePath), StackFile), []byte(b.String()))
}

func joinQuoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// withLinkAgent makes sp run the node under its link agent: `benchnet
// node linkem-agent ARGS --metrics :LinkAgentPort -- NODE ARGV` (the
// benchnet binary is in the image beside the node's), with NET_ADMIN (the
// agent installs its rules and binds its queue in the task's namespace)
// and SYS_NICE (its verdict thread runs SCHED_FIFO), the agent's port
// published like the node's.
func (sp *spec) withLinkAgent(exe string, agentArgs []string) {
	argv := append([]string{exe, "node", "linkem-agent"}, agentArgs...)
	argv = append(argv, "--metrics", ":"+strconv.Itoa(infra.LinkAgentPort), "--")
	sp.argv = append(argv, sp.nodeArgv...)
	sp.capAdd = []string{"NET_ADMIN", "SYS_NICE"}
	sp.ports = append(sp.ports, infra.LinkAgentPort)
}
