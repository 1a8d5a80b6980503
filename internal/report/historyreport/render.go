package historyreport

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
)

// Output names, in the history directory.
const (
	MarkdownFile = "history.md"
	HTMLFile     = "history.html"
)

// Title is the report's title.
func (v *View) Title() string { return "benchnet history: " + v.Series.Scenario }

// Write writes history.md, history.html and the plots into dir and
// returns the files written, Markdown and HTML first.
func Write(v *View, dir string) ([]string, error) {
	blocks, pngs, err := v.Blocks()
	if err != nil {
		return nil, err
	}
	return page.Write("history report", dir, MarkdownFile, HTMLFile, v.Title(), blocks, pngs)
}

// PlotFile is the plot of metric m of line l, in the plots directory.
func PlotFile(l *Line, m *Metric) string { return fmt.Sprintf("history_%s_%s.png", l.ID, m.Key) }

func better(m judge.Metric) string {
	if m.Better == judge.HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

func machineText(m history.Machine) string {
	s := fmt.Sprintf("%s × %d, kernel %s, %d MiB", page.DashIfEmpty(m.CPUModel), m.CPUs, page.DashIfEmpty(m.Kernel), m.MemoryMB)
	if m.Governor != "" {
		s += ", governor " + m.Governor
	}
	return s
}

// drawn: a line across builds (one build has nothing to draw across).
func (l *Line) drawn() bool { return len(l.Builds) > 1 }

// Blocks are the report's blocks and its plots by file name.
func (v *View) Blocks() ([]page.Block, map[string][]byte, error) {
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	s := v.Series
	add(page.Heading{Level: 1, Text: v.Title()})
	add(page.Para{Text: fmt.Sprintf("Scenario **%s** on testbed `%s`, machine `%s` (%s): %d records from %d directories, %s to %s. Results of another machine are another series, never drawn here.",
		s.Scenario, s.TestbedHash, s.MachineKey, machineText(v.Machine), v.Records, v.Sources, page.DashIfEmpty(s.First), page.DashIfEmpty(s.Last))})
	add(page.Para{Text: "Each metric is drawn across the builds in release order (a tag's semver order, Tendermint Core's v0.34 before CometBFT's; a source tree at the version its code states, after that tag, the commits of one tree in commit order), every repeat a point; the line joins the means of the counted repeats, and a run a judgement leaves out (testbed-bound, unreadable figures) is a grey cross. " +
		"Change points: E-Divisive means on the log repeats with a permutation test (α 0.025, 199 permutations, a fixed seed), each step confirmed by a Welch 95 % interval that excludes 1 and a step of at least 5 %; the ratio is the geometric mean after the step over before it. " +
		"A build recorded in several sessions (directories) is a control: when its own repeats moved between the sessions the machine drifted, and that metric's change points are refused rather than printed (docs/history-changepoints.md)."})

	add(page.Heading{Level: 2, Text: "Builds", ID: "builds"})
	bt := page.Table{Head: []string{"#", "build", "kind", "version", "commit", "first recorded", "records"}}
	count := map[string]int{}
	for _, l := range v.Lines {
		for _, r := range l.Records {
			count[Label(r)]++
		}
	}
	for i, b := range v.Builds {
		kind, version, commit := "", "", ""
		if n, ok := history.NodeBuild(b.Builds); ok {
			kind, version, commit = n.Kind, n.Version, n.Commit
			if n.Dirty {
				commit += " (dirty)"
			}
		}
		bt.Rows = append(bt.Rows, []string{page.Itoa(i + 1), b.Label, page.DashIfEmpty(kind), page.DashIfEmpty(version), page.DashIfEmpty(commit), page.DashIfEmpty(b.First), page.Itoa(count[b.Label])})
	}
	add(bt)
	var notes []string
	notes = append(notes, v.Notes...)
	if len(v.Unnamed) > 0 {
		notes = append(notes, "--order did not name "+strings.Join(v.Unnamed, ", ")+": drawn after the builds it named, in release order")
	}
	for _, n := range notes {
		add(page.Para{Text: "Order: " + n + "."})
	}

	pngs := map[string][]byte{}
	var single []*Line
	for _, l := range v.Lines {
		if !l.drawn() {
			single = append(single, l)
			continue
		}
		add(page.Heading{Level: 2, Text: fmt.Sprintf("%s. %s", strings.TrimPrefix(l.ID, "l"), l.Title), ID: l.ID})
		add(page.Para{Text: fmt.Sprintf("%d records of %d builds from %d sessions.", len(l.Records), len(l.Builds), l.Sessions)})
		for _, n := range l.Notes {
			add(page.Para{Text: "**Note:** " + n + "."})
		}
		if len(l.Intervals) > 0 {
			add(intervalTable(l))
		}
		if len(l.Metrics) == 0 && len(l.Intervals) == 0 {
			add(page.NoData{Reason: "none of the metrics asked for has a value in this line"})
		}
		for _, m := range l.Metrics {
			add(page.Heading{Level: 3, Text: fmt.Sprintf("%s (%s, %s)", m.Name, m.Unit, better(m.Metric)), ID: l.ID + "-" + m.Key})
			img, err := metricPlot(v, l, m)
			if err != nil {
				return nil, nil, fmt.Errorf("history report: plot %s of %s: %w", m.Key, l.Title, err)
			}
			file := PlotFile(l, m)
			pngs[file] = img
			add(page.Image{Alt: m.Name + ": " + l.Title, File: page.PlotsDir + "/" + file, PNG: img})
			add(page.Para{Text: verdictText(m)})
			if len(m.ChangePoints) > 0 {
				add(changeTable(m))
			}
			for _, d := range m.Drift {
				add(page.Para{Text: "Drift: " + d + "."})
			}
			add(pointTable(m))
		}
	}
	if len(single) > 0 {
		add(page.Heading{Level: 2, Text: "Lines with one build", ID: "single"})
		add(page.Para{Text: "Nothing to draw across builds: their loads or steps were measured on one build only (a QA's steady load is its own, chosen from its baseline)."})
		t := page.Table{Head: []string{"line", "build", "records", "means"}}
		for _, l := range single {
			var ms []string
			for _, m := range l.Metrics {
				for _, p := range m.Points {
					if mean, ok := p.Mean(); ok {
						ms = append(ms, fmt.Sprintf("%s %s (%d)", m.Key, report.CmpNum(mean), len(p.Counted())))
					}
				}
			}
			for _, iv := range l.Intervals {
				ms = append(ms, "interval "+intervalText(iv))
			}
			t.Rows = append(t.Rows, []string{l.Title, strings.Join(l.Builds, ", "), page.Itoa(len(l.Records)), page.DashIfEmpty(strings.Join(ms, "; "))})
		}
		add(t)
	}
	if len(v.Skipped) > 0 {
		add(page.Heading{Level: 2, Text: "Records not drawn", ID: "skipped"})
		t := page.Table{Head: []string{"records", "why"}}
		for _, sk := range v.Skipped {
			t.Rows = append(t.Rows, []string{page.Itoa(sk.Records), sk.Why})
		}
		add(t)
	}
	return bs, pngs, nil
}

// verdictText says what the change-point test made of a metric.
func verdictText(m *Metric) string {
	switch {
	case m.Refused != "":
		return "**" + m.Refused + "**: change points withheld."
	case m.Problem != "":
		return "No change points: " + m.Problem + "."
	case !m.Tested:
		return "No change points: one build."
	case len(m.ChangePoints) == 0:
		return "No change point."
	}
	var parts []string
	for _, cp := range m.ChangePoints {
		parts = append(parts, fmt.Sprintf("%s → %s ×%s [%s, %s], %s", cp.Before, cp.After, ratio(cp.Ratio), ratio(cp.Lo), ratio(cp.Hi), cp.Direction))
	}
	return fmt.Sprintf("**%d change point(s)**: %s.", len(m.ChangePoints), strings.Join(parts, "; "))
}

func changeTable(m *Metric) page.Table {
	t := page.Table{Head: []string{"between", "and", "ratio after/before", "95 % interval", "change", "direction", "p"}}
	for _, cp := range m.ChangePoints {
		t.Rows = append(t.Rows, []string{cp.Before, cp.After, ratio(cp.Ratio), "[" + ratio(cp.Lo) + ", " + ratio(cp.Hi) + "]",
			pct(cp.Ratio), cp.Direction, strconv.FormatFloat(cp.P, 'g', 3, 64)})
	}
	return t
}

// pointTable lists every repeat of each build; an excluded one in
// parentheses.
func pointTable(m *Metric) page.Table {
	t := page.Table{Head: []string{"build", "counted", "every repeat", "mean", "vs previous build"}}
	prev, havePrev := 0.0, false
	for _, p := range m.Points {
		var vals []string
		for _, s := range p.Samples {
			x := report.CmpNum(s.Value)
			if s.Excluded != "" {
				x = "(" + x + " left out)"
			}
			vals = append(vals, x)
		}
		mean, ok := p.Mean()
		meanText, delta := "—", "—"
		if ok {
			meanText = report.CmpNum(mean)
			if havePrev && prev > 0 {
				delta = pct(mean / prev)
			}
			prev, havePrev = mean, true
		}
		t.Rows = append(t.Rows, []string{p.Build, fmt.Sprintf("%d/%d", len(p.Counted()), len(p.Samples)), strings.Join(vals, ", "), meanText, delta})
	}
	return t
}

func intervalText(iv Interval) string {
	hi := "open"
	if iv.Hi > 0 {
		hi = report.CmpNum(iv.Hi)
	}
	return fmt.Sprintf("%s to %s tx/s per connection (%s)", report.CmpNum(iv.Lo), hi, iv.Outcome)
}

func intervalTable(l *Line) page.Table {
	t := page.Table{Head: []string{"build", "connections", "highest sustainable (tx/s per connection)", "lowest saturated", "outcome", "directory", "started"}}
	for _, iv := range l.Intervals {
		hi := "— (open above)"
		if iv.Hi > 0 {
			hi = report.CmpNum(iv.Hi)
		}
		t.Rows = append(t.Rows, []string{iv.Build, page.Itoa(iv.Connections), report.CmpNum(iv.Lo), hi, iv.Outcome, filepath.Base(iv.Source), iv.Started})
	}
	return t
}

// Summary writes the view for a terminal: each drawn metric's builds in
// order with their means, and its change points.
func (v *View) Summary(w io.Writer) {
	s := v.Series
	fmt.Fprintf(w, "series %s · testbed %s · machine %s (%s × %d): %d builds, %d records\n", s.Scenario, s.TestbedHash, s.MachineKey, v.Machine.CPUModel, v.Machine.CPUs, len(v.Builds), v.Records)
	for _, n := range v.Notes {
		fmt.Fprintf(w, "order: %s\n", n)
	}
	fmt.Fprintln(w, "each metric: its builds in release order with the mean of their counted repeats (how many), then its change points")
	for _, l := range v.Lines {
		if !l.drawn() {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", l.Title)
		for _, iv := range l.Intervals {
			fmt.Fprintf(w, "  %s: %s\n", iv.Build, intervalText(iv))
		}
		for _, m := range l.Metrics {
			var parts []string
			for _, p := range m.Points {
				if mean, ok := p.Mean(); ok {
					parts = append(parts, fmt.Sprintf("%s %s (%d)", p.Build, report.CmpNum(mean), len(p.Counted())))
				}
			}
			fmt.Fprintf(w, "  %s (%s): %s\n", m.Name, m.Unit, strings.Join(parts, " · "))
			switch {
			case m.Refused != "":
				fmt.Fprintf(w, "    %s\n", m.Refused)
			case m.Problem != "":
				fmt.Fprintf(w, "    no change points: %s\n", m.Problem)
			case len(m.ChangePoints) == 0:
				fmt.Fprintf(w, "    no change point\n")
			}
			for _, cp := range m.ChangePoints {
				fmt.Fprintf(w, "    change point %s → %s: ×%s [%s, %s] (%s, %s, p %.3g)\n", cp.Before, cp.After, ratio(cp.Ratio), ratio(cp.Lo), ratio(cp.Hi), pct(cp.Ratio), cp.Direction, cp.P)
			}
		}
		for _, n := range l.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if n := v.singles(); n > 0 {
		fmt.Fprintf(w, "\n%d line(s) with one build: listed in the report, nothing to draw across builds\n", n)
	}
}

func (v *View) singles() int {
	n := 0
	for _, l := range v.Lines {
		if !l.drawn() {
			n++
		}
	}
	return n
}

// CSVHead are the CSV's columns.
var CSVHead = []string{"line", "order", "build", "repeat", "metric", "value", "excluded", "valid", "source", "part", "started", "run_dir"}

// WriteCSV writes one row per repeat and metric the view shows, lines and
// builds in the view's order; order is the build's place (1-based).
func (v *View) WriteCSV(w io.Writer) error {
	pos := map[string]int{}
	for i, b := range v.Builds {
		pos[b.Label] = i + 1
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHead); err != nil {
		return err
	}
	for _, l := range v.Lines {
		for _, m := range l.Metrics {
			for _, p := range m.Points {
				for _, s := range p.Samples {
					row := []string{l.Title, page.Itoa(pos[p.Build]), p.Build, page.Itoa(s.Repeat), m.Key, page.G(s.Value),
						s.Excluded, strconv.FormatBool(s.Valid), s.Source, s.Part, s.Started, s.Dir}
					if err := cw.Write(row); err != nil {
						return err
					}
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
