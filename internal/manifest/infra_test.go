package manifest_test

// An external test: the runner refusals come from the runners' capability
// records, declared when the runners are built in.

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	_ "github.com/benchnet/benchnet/internal/infra/docker"
	_ "github.com/benchnet/benchnet/internal/infra/local"
	_ "github.com/benchnet/benchnet/internal/infra/swarm"
	"github.com/benchnet/benchnet/internal/manifest"
)

func TestInfra(t *testing.T) {
	base := "name = \"x\"\n[node.validator]\ncount = 2\n"
	cases := []struct {
		name, extra string
		wantErr     string // "" = valid; else "file:line: field: fragment"
		runner      string
	}{
		{"default local", "", "", "local"},
		{"docker", "[infra]\nrunner = \"docker\"\ncpus = 0.5\nmemory = \"256m\"\n", "", "docker"},
		{"unknown runner", "[infra]\nrunner = \"k8s\"\n", `m.toml:5: infra.runner: "k8s": want one of "local", "docker", "swarm"`, ""},
		{"swarm", "[infra]\nrunner = \"swarm\"\n", "", "swarm"},
		{"socket app refused on swarm", "app = \"kvstore-socket\"\n[infra]\nrunner = \"swarm\"\n", `m.toml:4: node.validator.app: "kvstore-socket" runs a second process`, ""},
		{"accounts app refused on swarm", "app = \"accounts\"\n[load]\nworkload = \"accounts\"\n[infra]\nrunner = \"swarm\"\n", `m.toml:4: node.validator.app: "accounts" runs a second process in the node's network namespace, which runner "swarm" cannot host: use app = "kvstore", or infra.runner = "docker" or "local"`, ""},
		{"links on swarm (agent)", "[network]\njitter = \"5ms\"\n[infra]\nrunner = \"swarm\"\n", "", "swarm"},
		{"userspace refused on swarm", "[network]\ndelay = \"5ms\"\nlinkem = \"userspace\"\n[infra]\nrunner = \"swarm\"\n", `m.toml:6: network.linkem: linkem = "userspace" is not supported by runner "swarm" yet: use "agent"`, ""},
		{"partition refused on swarm", "[network]\ndelay = \"5ms\"\n[[perturb]]\nat = \"1s\"\nnode = \"validator0\"\naction = \"partition\"\n[infra]\nrunner = \"swarm\"\n", `m.toml:9: perturb[0].action: partition changes links mid-run, which the link agents of runner "swarm" do not do reliably yet`, ""},
		{"limits need containers", "[infra]\ncpus = 1\n", `m.toml:5: infra.cpus: per-node limits need a runner that enforces them (docker or swarm)`, ""},
		{"bad memory", "[infra]\nrunner = \"docker\"\nmemory = \"lots\"\n", `m.toml:6: infra.memory: memory "lots": want a size`, ""},
		{"tiny memory", "[infra]\nrunner = \"docker\"\nmemory = \"1m\"\n", `m.toml:6: infra.memory: memory "1m": below docker's minimum`, ""},
		{"negative cpus", "[infra]\nrunner = \"docker\"\ncpus = -1\n", `m.toml:6: infra.cpus: -1: want`, ""},
		{"links on docker", "[network]\nloss = \"1%\"\ndelay = \"50ms\"\n[infra]\nrunner = \"docker\"\n", "", "docker"},
		{"netem refused on docker", "[network]\nlinkem = \"netem\"\ndelay = \"5ms\"\n[infra]\nrunner = \"docker\"\n", `m.toml:5: network.linkem: linkem = "netem" is not supported by runner "docker"`, ""},
		{"swarm engines", "[infra]\nrunner = \"swarm\"\nengines = [\"ssh://root@w1\", \"w2\"]\n", "", "swarm"},
		{"engines need swarm", "[infra]\nrunner = \"docker\"\nengines = [\"w2\"]\n", `m.toml:6: infra.engines: engines are the machines of a runner that drives several (swarm)`, ""},
		{"blank engine", "[infra]\nrunner = \"swarm\"\nengines = [\" \"]\n", `m.toml:6: infra.engines: entry 0 " "`, ""},
		{"gossipsub on swarm", "kind = \"gossipsub\"\n[infra]\nrunner = \"swarm\"\n", "", "swarm"},
		{"delay on swarm (agent)", "[network]\ndelay = \"5ms\"\n[infra]\nrunner = \"swarm\"\n", "", "swarm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := manifest.Parse("m.toml", []byte(base+c.extra))
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Infra.Runner != c.runner {
					t.Fatalf("runner %q, want %q", m.Infra.Runner, c.runner)
				}
				return
			}
			var es manifest.Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %v, want manifest errors", err)
			}
			for _, e := range es {
				if strings.HasPrefix(e.Error(), c.wantErr) {
					return
				}
			}
			t.Fatalf("got %v, want an error starting %q", err, c.wantErr)
		})
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"512m": 512 << 20, "2g": 2 << 30, "7340032": 7 << 20, "8192k": 8 << 20} {
		got, err := manifest.ParseMemory(in)
		if err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// WithRunner's Raw parses back to the same manifest with the new runner,
// variants, [qa] and [rotate] tables included: a resumed experiment reads
// it, not the user's file.
func TestWithRunnerRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	tried := 0
	for _, f := range files {
		for _, r := range manifest.Runners {
			m, err := manifest.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if m.Infra.Runner == r {
				continue
			}
			m.Infra.Runner = r
			if len(m.Validate()) > 0 {
				continue // this runner refuses the manifest: applyRunner stops there
			}
			m.Infra.Runner = ""
			if err := m.WithRunner(r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			back, err := manifest.Parse(f+" (rendered)", m.Raw)
			if err != nil {
				t.Fatalf("%s with runner %s: rendered manifest does not parse: %v\n%s", f, r, err, m.Raw)
			}
			want, err := toml.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := toml.Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if back.Infra.Runner != r || !bytes.Equal(got, want) {
				t.Errorf("%s with runner %s: round trip changed the manifest\n%s", f, r, m.Raw)
			}
			tried++
		}
	}
	if tried < len(files) {
		t.Errorf("only %d (example, runner) pairs tried for %d examples", tried, len(files))
	}
}
