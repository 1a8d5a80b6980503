package manifest

import (
	"fmt"
	"math"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Publish is the [publish] table: the workload of a kind that publishes
// (Schema.Publishes, a node.Publisher driver). The harness asks hosts to
// publish Count messages network-wide at Rate, message i at t0 + i/Rate,
// each from a publisher drawn from the seed (or Source).
type Publish struct {
	// Rate is messages/s over the whole network.
	Rate float64 `toml:"rate" json:"rate"`
	// Size is every message's byte size (the report's 1000 B by default).
	Size int `toml:"size" json:"size"`
	// Duration or Count: Count, when set, is the exact number of messages.
	Duration rundir.Duration `toml:"duration" json:"duration"`
	Count    int             `toml:"count" json:"count"`
	// Source is "random" (publisher of each message drawn from the seed)
	// or a node name ("gossip0").
	Source string `toml:"source" json:"source"`
	// Warmup is the time between every host being peered and the first
	// publish (meshes form over a few heartbeats); Cooldown the time after
	// the last publish before the hosts are stopped.
	Warmup   rundir.Duration `toml:"warmup" json:"warmup"`
	Cooldown rundir.Duration `toml:"cooldown" json:"cooldown"`
}

// The publish workload's defaults and limits.
const (
	DefaultPublishRate     = 20.0
	DefaultPublishSize     = 1000
	DefaultPublishDuration = 60 * time.Second
	DefaultPublishSource   = "random"
	DefaultPublishWarmup   = 5 * time.Second
	DefaultPublishCooldown = 5 * time.Second
	// MinPublishSize holds the 16-character message ID every payload
	// starts with (the hosts' message-ID function reads it).
	MinPublishSize = 16
	MaxPublishSize = 1 << 20
)

// publishDefaults fills in the [publish] table of a publishing testnet.
func (m *Manifest) publishDefaults() {
	p := &m.Publish
	if p.Rate == 0 && !m.pos.has("publish.rate") {
		p.Rate = DefaultPublishRate
	}
	if p.Size == 0 && !m.pos.has("publish.size") {
		p.Size = DefaultPublishSize
	}
	if p.Duration.Duration == 0 && p.Count == 0 && !m.pos.has("publish.duration") {
		p.Duration.Duration = DefaultPublishDuration
	}
	setStr(&p.Source, DefaultPublishSource)
	if !m.pos.has("publish.warmup") {
		p.Warmup.Duration = DefaultPublishWarmup
	}
	if !m.pos.has("publish.cooldown") {
		p.Cooldown.Duration = DefaultPublishCooldown
	}
}

// CheckPublish is the [publish] table's rules, without file or line (as
// CheckLoad): Validate locates them; internal/load calls it for a config
// built in code.
func CheckPublish(p Publish) []*FieldError {
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	rateOK := p.Rate > 0 && p.Rate <= MaxRate
	if !rateOK {
		add("publish.rate", "must be positive (messages/s over the network), at most %v, got %v", MaxRate, p.Rate)
	}
	if p.Size < MinPublishSize || p.Size > MaxPublishSize {
		add("publish.size", "%d bytes: want %d to %d (a message starts with its 16-character ID)", p.Size, MinPublishSize, MaxPublishSize)
	}
	durOK := p.Duration.Duration >= 0 && p.Duration.Duration <= MaxDuration
	if !durOK {
		add("publish.duration", "%s: want 0 to %s", p.Duration.Duration, MaxDuration)
	}
	switch {
	case p.Count < 0 || p.Count > MaxTxs:
		add("publish.count", "must be 0 to %d, got %d", MaxTxs, p.Count)
	case p.Count == 0 && p.Duration.Duration <= 0 && durOK:
		add("publish.duration", "set a positive duration or count")
	case p.Count == 0 && rateOK && durOK && math.Ceil(p.Rate*p.Duration.Seconds()) > MaxTxs:
		add("publish.duration", "rate × duration is %.0f messages, more than the %d one run may publish", math.Ceil(p.Rate*p.Duration.Seconds()), MaxTxs)
	}
	for _, w := range []struct {
		field string
		d     time.Duration
	}{{"publish.warmup", p.Warmup.Duration}, {"publish.cooldown", p.Cooldown.Duration}} {
		if w.d < 0 || w.d > MaxWait {
			add(w.field, "%s: want 0 to %s", w.d, MaxWait)
		}
	}
	return errs
}

// validateSource checks that a fixed publisher is a node of the plan
// (groups' nodes are named group + index).
func (m *Manifest) validateSource(add func(string, string, ...any)) {
	src := m.Publish.Source
	if src == "random" {
		return
	}
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		for i := 0; i < min(g.Count, MaxNodes); i++ {
			if src == fmt.Sprintf("%s%d", name, i) {
				return
			}
		}
	}
	add("publish.source", "%q: want \"random\" or a node of the testnet (e.g. %q)", src, m.firstNode())
}

func (m *Manifest) firstNode() string {
	if names := m.GroupNames(); len(names) > 0 {
		return names[0] + "0"
	}
	return "gossip0"
}
