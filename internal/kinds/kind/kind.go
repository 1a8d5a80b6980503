// Package kind is the one call a node kind makes to join the binary, as a
// node_exporter collector makes one registerCollector call: Register with a
// Kind that holds every part the frame asks of it. Register fans the parts
// out to the registries the generic packages read by a run's kind (node,
// capacity, analyze, figures, report, judge, manifest), which stay where
// they are so that those packages keep reaching no kind by import. A part
// left out panics at init, naming it: a kind cannot link half-registered.
package kind

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/report"
)

// Kind is everything a node kind gives the frame.
type Kind struct {
	// Name is what a manifest group's `kind` names.
	Name string
	// Manifest is what the kind takes of the manifest's generic tables and
	// the tables it owns, with their strict decoder (manifest.SchemaOf).
	// Optional: the zero Schema is a tx chain configured by the generic
	// tables alone (CometBFT's).
	Manifest manifest.Schema
	// Driver makes the kind's node driver (node.New).
	Driver func(node.Config) node.Driver
	// Capacity is its cost model (plan's sizing, capacity.For).
	Capacity capacity.Model
	// Analysis derives a run's results (analyze.Run).
	Analysis analyze.Kind
	// Figures reads the figures comparisons judge (figures.For); its
	// Metrics must be Metrics.Judged, the one table.
	Figures figures.NodeMetrics
	// Report renders a run and its part of a comparison (report.Render).
	Report report.Kind
	// Metrics are the judged and threshold-only tables (judge.MetricsOf).
	Metrics judge.KindMetrics
}

// Parts are the fields of Kind a kind must fill, in the order Missing
// names them.
var Parts = []string{"Driver", "Capacity", "Analysis", "Figures", "Report", "Metrics"}

// Missing names the parts k leaves out, and a figures table that is not
// the judged one.
func (k Kind) Missing() []string {
	var miss []string
	add := func(part string, absent bool) {
		if absent {
			miss = append(miss, part)
		}
	}
	add("Driver", k.Driver == nil)
	add("Capacity", k.Capacity.Need == nil)
	add("Analysis", k.Analysis.Analyze == nil || k.Analysis.Summary == nil)
	add("Figures", k.Figures == nil)
	add("Report", k.Report.Render == nil || k.Report.Compare == nil)
	add("Metrics", len(k.Metrics.Judged) == 0)
	if k.Figures != nil && len(k.Metrics.Judged) > 0 && !slices.EqualFunc(k.Figures.Metrics(), k.Metrics.Judged, func(a, b judge.Metric) bool { return a.Key == b.Key }) {
		miss = append(miss, "Figures (its Metrics are not Metrics.Judged)")
	}
	return miss
}

var linked = registry.New[Kind]("node kind")

// Register links k into the binary: every registry gets its part. Call it
// once, from the kind's root package's init.
func Register(k Kind) {
	if k.Name == "" {
		panic("kind.Register: a kind without a name")
	}
	if miss := k.Missing(); len(miss) > 0 {
		panic(fmt.Sprintf("kind.Register(%q): missing %s", k.Name, strings.Join(miss, ", ")))
	}
	linked.Register(k.Name, k)
	manifest.RegisterKind(k.Name, k.Manifest)
	judge.RegisterKind(k.Name, k.Metrics)
	node.Register(k.Name, k.Driver)
	capacity.Register(k.Name, k.Capacity)
	analyze.Register(k.Name, k.Analysis)
	figures.Register(k.Name, k.Figures)
	report.RegisterKind(k.Name, k.Report)
}

// Names are the kinds linked into this binary.
func Names() []string { return linked.Names() }
