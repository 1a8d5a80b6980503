package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/benchnet/benchnet/internal/manifest"
)

// loadFlags override the manifest's [load] table field by field; only flags
// the user set take effect, so the manifest stays the source of defaults.
type loadFlags struct {
	l manifest.Load
	// fields maps a flag name to its manifest field, for error messages.
	fields map[string]string
}

func (f *loadFlags) register(fs *pflag.FlagSet) {
	f.fields = map[string]string{}
	add := func(name, field string) { f.fields[name] = "load." + field }
	fs.Float64Var(&f.l.Rate, "rate", 0, "tx/s per connection (default: manifest's load.rate)")
	add("rate", "rate")
	fs.IntVarP(&f.l.Connections, "connections", "c", 0, "connections per target")
	add("connections", "connections")
	fs.DurationVar(&f.l.Duration.Duration, "duration", 0, "how long to send")
	add("duration", "duration")
	fs.IntVar(&f.l.Count, "count", 0, "exact number of txs (instead of a duration)")
	add("count", "count")
	fs.IntVar(&f.l.Size, "size", 0, "exact bytes per tx")
	add("size", "size")
	fs.StringVar(&f.l.Shape, "shape", "", "constant or ramp")
	add("shape", "shape")
	fs.Float64Var(&f.l.RampFrom, "ramp-from", 0, "start rate of a ramp")
	add("ramp-from", "ramp_from")
	fs.StringVar(&f.l.Target, "target", "", "round-robin, all or single")
	add("target", "target")
	fs.StringVar(&f.l.Transport, "transport", "", "websocket or http")
	add("transport", "transport")
	fs.StringVar(&f.l.Method, "method", "", "async or sync")
	add("method", "method")
	fs.StringVar(&f.l.Format, "format", "", "kv or loadtime")
	add("format", "format")
	fs.StringVar(&f.l.Keys, "keys", "", "unique or fixed")
	add("keys", "keys")
	fs.DurationVar(&f.l.Warmup.Duration, "warmup", 0, "longest warm-up")
	add("warmup", "warmup")
	fs.DurationVar(&f.l.Grace.Duration, "grace", 0, "longest wait for mempools to drain after the last send")
	add("grace", "grace")
	fs.StringVar(&f.l.LatencyBlock, "latency-block", "", "headline latency from block H or H+1")
	add("latency-block", "latency_block")
}

// apply copies the flags the user set into m.Load and revalidates; errors
// caused by a flag name the flag, not the manifest line.
func (f *loadFlags) apply(cmd *cobra.Command, m *manifest.Manifest) error {
	set := map[string]bool{}
	cmd.Flags().Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	if m.Publishes() {
		return f.applyPublish(set, m)
	}
	l := &m.Load
	copyIf := func(name string, apply func()) {
		if set[name] {
			apply()
		}
	}
	copyIf("rate", func() { l.Rate = f.l.Rate })
	copyIf("connections", func() { l.Connections = f.l.Connections })
	copyIf("duration", func() { l.Duration = f.l.Duration; l.Count = 0 })
	copyIf("count", func() { l.Count = f.l.Count })
	copyIf("size", func() { l.Size = f.l.Size })
	copyIf("shape", func() { l.Shape = f.l.Shape })
	copyIf("ramp-from", func() { l.RampFrom = f.l.RampFrom })
	copyIf("target", func() { l.Target = f.l.Target })
	copyIf("transport", func() { l.Transport = f.l.Transport })
	copyIf("method", func() { l.Method = f.l.Method })
	copyIf("format", func() { l.Format = f.l.Format })
	copyIf("keys", func() { l.Keys = f.l.Keys })
	copyIf("warmup", func() { l.Warmup = f.l.Warmup })
	copyIf("grace", func() { l.Grace = f.l.Grace })
	copyIf("latency-block", func() { l.LatencyBlock = f.l.LatencyBlock })
	return revalidate(m, set, f.fields)
}

// publishFlags are the load flags the [publish] table of a publishing
// kind takes (rate in msg/s network-wide); the others are the tx load's.
var publishFlags = map[string]string{"rate": "publish.rate", "duration": "publish.duration", "count": "publish.count",
	"size": "publish.size", "warmup": "publish.warmup"}

// applyPublish copies the flags the user set into m.Publish and
// revalidates; a tx-load flag is refused by name.
func (f *loadFlags) applyPublish(set map[string]bool, m *manifest.Manifest) error {
	var refused []string
	for name := range set {
		if _, isLoad := f.fields[name]; isLoad {
			if _, ok := publishFlags[name]; !ok {
				refused = append(refused, "--"+name)
			}
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return usageError{fmt.Errorf("%s: not for a %s testnet (its [publish] takes --rate, --duration, --count, --size and --warmup)", strings.Join(refused, ", "), m.Kind())}
	}
	p := &m.Publish
	if set["rate"] {
		p.Rate = f.l.Rate
	}
	if set["duration"] {
		p.Duration, p.Count = f.l.Duration, 0
	}
	if set["count"] {
		p.Count = f.l.Count
	}
	if set["size"] {
		p.Size = f.l.Size
	}
	if set["warmup"] {
		p.Warmup = f.l.Warmup
	}
	return revalidate(m, set, publishFlags)
}

// revalidate validates m after flags (name -> the manifest field they set)
// changed it: errors that all come from flags the user set are reported as
// those flags, anything else as the manifest's errors.
func revalidate(m *manifest.Manifest, set map[string]bool, fields map[string]string) error {
	errs := m.Validate()
	if len(errs) == 0 {
		return nil
	}
	var fromFlags []string
	for name, field := range fields {
		if !set[name] {
			continue
		}
		for _, e := range errs {
			if e.Field == field {
				e.File, e.Line, e.Field = "", 0, "--"+name
				fromFlags = append(fromFlags, e.Error())
			}
		}
	}
	if len(fromFlags) == len(errs) {
		sort.Strings(fromFlags)
		return usageError{fmt.Errorf("invalid flag %s", strings.Join(fromFlags, "; "))}
	}
	return usageError{errs}
}
