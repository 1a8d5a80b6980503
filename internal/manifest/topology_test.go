package manifest

import (
	"strings"
	"testing"
	"time"
)

func TestTopologyErrors(t *testing.T) {
	for _, c := range []struct {
		name, toml, want string
	}{
		{"unknown topology", "[network]\ntopology = \"star\"\n[node.validator]\ncount = 4\n",
			`bad.toml:2: network.topology: "star": want one of "full", "seeds", "random", "line", "ring", "random-regular", "barabasi-albert"`},
		{"ba m too large", "[network]\ntopology = \"barabasi-albert\"\nm = 4\n[node.validator]\ncount = 4\n",
			"bad.toml:3: network.m: m = 4: want 1 <= m < nodes (4)"},
		{"ba m missing", "[network]\ntopology = \"barabasi-albert\"\n[node.validator]\ncount = 4\n",
			`bad.toml:2: network.topology: "barabasi-albert" needs m: m = 0: want 1 <= m < nodes (4)`},
		{"m without ba", "[network]\ntopology = \"ring\"\nm = 2\n[node.validator]\ncount = 4\n",
			`bad.toml:3: network.m: only the "barabasi-albert" topology takes m`},
		{"degree without rr", "[network]\ndegree = 2\n[node.validator]\ncount = 4\n",
			`bad.toml:2: network.degree: only the "random-regular" topology takes degree`},
		{"odd regular", "[network]\ntopology = \"random-regular\"\ndegree = 3\n[node.validator]\ncount = 5\n",
			"bad.toml:3: network.degree: degree = 3 with 5 nodes: nodes x degree must be even"},
		{"graph with seeds", "[network]\ntopology = \"line\"\n[node.validator]\ncount = 3\n[node.seed]\ncount = 1\n",
			`bad.toml:2: network.topology: "line" turns PEX off`},
		{"bad delay", "[network]\ndelay = \"fast\"\n[node.validator]\ncount = 2\n",
			`bad.toml:2: network.delay: "fast": want a one-way delay from 0 to 10s`},
		{"delay too long", "[network]\ndelay = \"11s\"\n[node.validator]\ncount = 2\n",
			`bad.toml:2: network.delay: "11s"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", []byte(c.toml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v\n want it to contain %q", err, c.want)
			}
		})
	}
}

func TestTopologyValid(t *testing.T) {
	m, err := Parse("ok.toml", []byte("[network]\ntopology = \"barabasi-albert\"\nm = 2\ndelay = \"100ms\"\nloss = \"0.1%\"\n[node.validator]\ncount = 95\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Network.M != 2 || m.Network.Delay != "100ms" {
		t.Errorf("network %+v", m.Network)
	}
	if d, _ := ParseDelay(m.Network.Delay); d != 100*time.Millisecond {
		t.Errorf("delay %v", d)
	}
}
