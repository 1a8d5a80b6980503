package kind

import (
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeFigures is a figures.NodeMetrics over a given table.
type fakeFigures []judge.Metric

func (f fakeFigures) Metrics() []judge.Metric                { return f }
func (fakeFigures) ReadFigures(string) (*figures.Run, error) { return nil, nil }
func (fakeFigures) Unit() string                             { return "block" }
func (fakeFigures) Resampling() string                       { return "" }
func (fakeFigures) VariantKey(string) bool                   { return false }
func (fakeFigures) VariantKeys() string                      { return "" }

var table = []judge.Metric{{Key: "tps", Better: judge.HigherIsBetter}, {Key: "latency_avg", Better: judge.LowerIsBetter}}

func whole() Kind {
	return Kind{
		Name:     "fake",
		Driver:   func(node.Config) node.Driver { return nil },
		Capacity: capacity.Model{Need: func(*plan.Testnet, string) capacity.Estimate { return capacity.Estimate{} }},
		Analysis: analyze.Kind{
			Analyze: func(*rundir.Dir) (*rundir.Results, error) { return nil, nil },
			Summary: func(*rundir.Results) string { return "" },
		},
		Figures: fakeFigures(table),
		Report: report.Kind{
			Render:  func(string, string) ([]string, error) { return nil, nil },
			Compare: func(*rundir.CompareIndex) report.CompareView { return nil },
		},
		Metrics: judge.KindMetrics{Judged: table},
	}
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Kind)
		want []string
	}{
		{"whole", func(*Kind) {}, nil},
		{"no driver", func(k *Kind) { k.Driver = nil }, []string{"Driver"}},
		{"no cost model", func(k *Kind) { k.Capacity = capacity.Model{} }, []string{"Capacity"}},
		{"no summary", func(k *Kind) { k.Analysis.Summary = nil }, []string{"Analysis"}},
		{"no figures", func(k *Kind) { k.Figures = nil }, []string{"Figures"}},
		{"no comparison view", func(k *Kind) { k.Report.Compare = nil }, []string{"Report"}},
		{"no tables", func(k *Kind) { k.Metrics = judge.KindMetrics{} }, []string{"Metrics"}},
		{"two tables", func(k *Kind) { k.Figures = fakeFigures(table[:1]) }, []string{"Figures (its Metrics are not Metrics.Judged)"}},
		{"two parts", func(k *Kind) { k.Driver, k.Figures = nil, nil }, []string{"Driver", "Figures"}},
	} {
		k := whole()
		tc.edit(&k)
		if got := k.Missing(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Missing() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A kind with a part left out does not link: Register panics naming it,
// before any registry got a part.
func TestRegisterRefusesAPartLeftOut(t *testing.T) {
	k := whole()
	k.Name, k.Report = "half", report.Kind{}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, `"half"`) || !strings.Contains(s, "missing Report") {
			t.Fatalf("panic %v, want one naming the kind and its missing Report", r)
		}
		if slices.Contains(Names(), "half") || slices.Contains(node.Kinds(), "half") {
			t.Error("the half kind reached a registry")
		}
	}()
	Register(k)
}
