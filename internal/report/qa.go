package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a QA's report, relative to the QA directory.
const (
	QAMarkdownFile = "qa.md"
	QAHTMLFile     = "qa.html"
)

// A QA directory is known by its qa.json (benchnet report DIR).
func init() {
	RegisterDir(rundir.QAFile, "qa", func(dir, _ string) ([]string, error) { return RenderQA(dir) })
}

// RenderQA reads a QA directory (qa.json and its steps' directories only)
// and writes qa.md (plots in plots/) and a self-contained qa.html. The same
// directory always gives the same bytes.
func RenderQA(dir string) ([]string, error) {
	x, err := rundir.QARecord.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("qa report: %w", err)
	}
	blocks, pngs, err := qaBlocks(dir, x)
	if err != nil {
		return nil, err
	}
	return writeDoc("qa report", dir, QAMarkdownFile, QAHTMLFile, qaTitle(x), blocks, pngs)
}

func qaTitle(x *rundir.QAIndex) string {
	return fmt.Sprintf("benchnet QA: %s against %s", x.Candidate.Ref, x.Baseline.Ref)
}

// QAResultsText is the Test Results table for a terminal.
func QAResultsText(x *rundir.QAIndex) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Test Results (%s against %s)\n", x.Candidate.Ref, x.Baseline.Ref)
	rows := [][]string{{"Scenario", "Date", "Version", "Result", "Why"}}
	for _, r := range x.Results {
		res := string(r.Result)
		if !r.Judged {
			res += " (not judged)"
		}
		rows = append(rows, []string{r.Scenario, page.DashIfEmpty(r.Date), r.Version, res, r.Why})
	}
	w := make([]int, 4)
	for _, r := range rows {
		for i := 0; i < 4; i++ {
			w[i] = max(w[i], len([]rune(r[i])))
		}
	}
	for _, r := range rows {
		for i := 0; i < 4; i++ {
			fmt.Fprintf(&b, "%-*s  ", w[i], r[i])
		}
		fmt.Fprintln(&b, r[4])
	}
	fmt.Fprintf(&b, "Overall: %s (exit %d)\n", x.Overall, x.ExitCode)
	return b.String()
}

func qaBlocks(dir string, x *rundir.QAIndex) ([]page.Block, map[string][]byte, error) {
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	pngs := map[string][]byte{}
	var q rundir.QAConfig
	_ = json.Unmarshal(x.Config, &q)

	add(page.Heading{Level: 1, Text: qaTitle(x), ID: ""})
	status := "complete"
	if !x.Complete {
		status = "**incomplete**: the results cover the steps that finished (`benchnet qa --resume DIR` finishes it)"
	}
	overall := fmt.Sprintf("**%s** (exit code %d)", x.Overall, x.ExitCode)
	if x.Overall == "" {
		overall = "not decided (the QA stopped before its results)"
	}
	add(page.Para{Text: fmt.Sprintf("Overall result: %s. Profile %s; started %s, finished %s; %s.", overall, x.Profile, x.Started, page.DashIfEmpty(x.Finished), status)})

	// Test Results first, as the seeds' reports end with it and readers look for it.
	add(page.Heading{Level: 2, Text: "Test Results", ID: "test-results"})
	var rows [][]string
	for _, r := range x.Results {
		res := string(r.Result)
		if !r.Judged {
			res += " (not judged)"
		}
		rows = append(rows, []string{r.Scenario, page.DashIfEmpty(r.Date), r.Version, res, r.Why})
	}
	add(page.Table{Head: []string{"Scenario", "Date", "Version", "Result", "Why"}, Rows: rows})
	add(page.Para{Text: fmt.Sprintf("Baseline: %s. The overall result is the worst judged result (Fail over Inconclusive over Pass).", x.Baseline.Version())})

	// Saturation.
	add(page.Heading{Level: 2, Text: "Saturation point", ID: "saturation"})
	sweeps := map[string]*rundir.SweepIndex{}
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		s := x.Step("saturation-" + b)
		if s == nil || s.Dir == "" {
			continue
		}
		if idx, err := rundir.SweepRecord.Read(rundir.StepPath(dir, s)); err == nil {
			idx.Judge()
			sweeps[b] = idx
		}
	}
	if sat := x.Saturation; sat != nil && sat.OverloadRate > 0 {
		from := fmt.Sprintf("its sustainable rate %s backed off by %s %%", page.G(sat.Baseline.Lo), page.G(sat.Margin*100))
		if sat.RateFrom != "" {
			from = sat.RateFrom
		}
		add(page.Para{Text: fmt.Sprintf("At c = %d the baseline's search places its saturation in %s tx/s per connection. Chosen load for the steady test: %s tx/s per connection (%s).",
			sat.Connections, sat.Baseline, page.G(sat.Rate), from)})
		add(page.Heading{Level: 3, Text: "Paired decision", ID: "paired"})
		verdict := "no pair ran"
		if v := sat.Paired; v != nil {
			verdict = fmt.Sprintf("**%s** — %s", sat.Verdict, sat.Why)
			if v.MDE > 0 {
				verdict += fmt.Sprintf(". Minimum detectable effect at %d pairs (80 %% power, the test's level): %.1f %%; spread of ln(candidate/baseline): %.4f", v.Pairs, 100*v.MDE, v.SDLog)
			}
			if v.PairsNeeded > 0 && v.Outcome == judge.OutcomeInconclusive {
				verdict += fmt.Sprintf("; ~%d pairs would decide", v.PairsNeeded)
			}
		}
		add(page.Para{Text: fmt.Sprintf("Both builds at %s tx/s per connection (past the baseline's highest sustainable rate), one run each per pair, %s: each run's committed txs over its busy span (load start to the block by which %s %% of its committed txs were in) is its build's capacity under overload. %s.", page.G(sat.OverloadRate), rundir.PairOrderWords(q.PairOrder), page.G(100*rundir.BusyShare), verdict)})
		var rows [][]string
		for i, p := range sat.Pairs {
			ratio := "–"
			if p.Excluded() == "" && p.BaseTPS > 0 {
				ratio = fmt.Sprintf("%.3f", p.CandTPS/p.BaseTPS)
			}
			rows = append(rows, []string{strconv.Itoa(i + 1), p.First, sideTPS(p.BaseTPS, p.BaseExcluded), sideTPS(p.CandTPS, p.CandExcluded), ratio, page.DashIfEmpty(p.Excluded())})
		}
		add(page.Table{Head: []string{"pair", "first", "baseline tx/s (busy span)", "candidate tx/s (busy span)", "ratio", "excluded"}, Rows: rows})
	} else if sat != nil {
		add(page.Para{Text: fmt.Sprintf("At c = %d: baseline saturates in %s tx/s per connection, candidate in %s. Verdict: **%s** (%s). Chosen load: %s tx/s per connection (the baseline's sustainable rate %s backed off by %s %%).",
			sat.Connections, sat.Baseline, sat.Candidate, sat.Verdict, sat.Why, page.G(sat.Rate), page.G(sat.Baseline.Lo), page.G(sat.Margin*100))})
	} else {
		add(page.NoData{Reason: "the saturation step did not finish"})
	}
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		idx := sweeps[b]
		if idx == nil && b == rundir.QACandidate && x.Step("saturation-candidate") == nil {
			continue // decided by pairs: the candidate is not searched
		}
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%s (%s)", b, buildRef(x, b)), ID: ""})
		if idx == nil {
			add(page.NoData{Reason: "no sweep directory"})
			continue
		}
		if idx.Search != nil {
			var rows [][]string
			for i, p := range idx.Search.Probes {
				rows = append(rows, []string{strconv.Itoa(i + 1), page.G(p.Rate), strconv.Itoa(p.Runs), string(p.Decision), p.Why})
			}
			add(page.Table{Head: []string{"probe", "rate (tx/s per conn.)", "runs", "decision", "why"}, Rows: rows})
			add(page.Para{Text: fmt.Sprintf("Search: %s", page.DashIfEmpty(idx.Search.Detail))})
		} else if idx.Grid != nil {
			add(qaTable(idx))
		}
	}
	if p := qaOverlay(sweeps); p != nil {
		png, err := page.RenderPNG(p)
		if err != nil {
			return nil, nil, fmt.Errorf("qa report: overlay: %w", err)
		}
		pngs["qa_saturation_overlay.png"] = png
		add(page.Image{Alt: "Committed vs offered, both builds", File: page.PlotsDir + "/qa_saturation_overlay.png", PNG: png})
		add(page.Para{Text: "Every probe (cell) of both builds: committed TPS against the load offered; the dashed line is y = x. Where a build's points leave the diagonal, it saturates."})
	}

	// Steady test and LE.
	steady := qaCompare(dir, x, "steady")
	le := qaCompare(dir, x, "latency-emulation")
	add(page.Heading{Level: 2, Text: "Steady test", ID: "steady"})
	if steady == nil {
		add(page.NoData{Reason: "the steady step did not finish"})
	} else {
		add(page.Para{Text: fmt.Sprintf("%d runs, baseline and candidate interleaved, at the chosen load. Repeats: %s. %s", len(steady.Runs), page.DashIfEmpty(steady.StopReason), upperFirst(strings.TrimSuffix(steady.Rule, "."))+".")})
		add(verdictTable(steady.CompareIndex))
	}
	if le != nil {
		add(page.Heading{Level: 3, Text: "With latency emulation", ID: "le"})
		judged := "reported beside the steady test, not judged (it is the baseline of the next QA; --judge-le judges it)"
		if q.JudgeLE {
			judged = "judged (--judge-le)"
		}
		add(page.Para{Text: "The same steady test with the AWS zone table and a random zone per node drawn from the manifest's seed: " + judged + "."})
		add(verdictTable(le.CompareIndex))
	}
	add(page.Heading{Level: 3, Text: "QA metric plots, side by side", ID: "plots"})
	panels := make([]RunView, 3)
	var which [3]string
	var kind Kind
	panels[0], which[0] = qaRun(steady, rundir.QABaseline, &kind)
	panels[1], which[1] = qaRun(steady, rundir.QACandidate, &kind)
	panels[2], which[2] = qaRun(le, rundir.QACandidate, &kind)
	labels := []string{"baseline", "candidate", "candidate, LE"}
	var shown []string
	for i, w := range which {
		if w != "" {
			shown = append(shown, labels[i]+" "+w)
		}
	}
	add(page.Para{Text: fmt.Sprintf("Each row: baseline | candidate | candidate with latency emulation, on shared axes. Each panel is the build's run with the median H+1 latency p50 (%s); every run's own report has the rest.", page.DashIfEmpty(strings.Join(shown, ", ")))})
	for _, name := range kind.SideBySide {
		ps := make([]*plot.Plot, len(panels))
		title, any := "", false
		for i, v := range panels {
			if v == nil {
				continue
			}
			p, t, ok := v.Figure(name)
			if ok {
				title = t
			}
			if p != nil {
				ps[i], any = p, true
			}
		}
		if !any {
			continue
		}
		for i, p := range ps {
			if p == nil {
				p = plot.New()
				p.Title.Text = labels[i] + ": no data"
				ps[i] = p
			} else {
				p.Title.Text = labels[i] + ": " + title
			}
		}
		shareAxes(ps)
		png, err := tilePNG(ps)
		if err != nil {
			return nil, nil, fmt.Errorf("qa report: plot %s: %w", name, err)
		}
		file := "qa_" + name + ".png"
		pngs[file] = png
		add(page.Heading{Level: 4, Text: title, ID: ""})
		add(page.Image{Alt: title + ", side by side", File: page.PlotsDir + "/" + file, PNG: png})
	}

	// Rotating nodes.
	add(page.Heading{Level: 2, Text: "Rotating nodes", ID: "rotating"})
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		s := x.Step("rotate-" + b)
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%s (%s)", b, buildRef(x, b)), ID: ""})
		if s == nil || s.Dir == "" {
			add(page.NoData{Reason: notRun(s)})
			continue
		}
		path := rundir.StepPath(dir, s)
		d, err := openRun(path)
		if err != nil {
			add(page.NoData{Reason: err.Error()})
			continue
		}
		f, err := d.ReadFaults()
		if err != nil {
			add(page.NoData{Reason: "no " + rundir.FaultsFile})
			continue
		}
		var rows [][]string
		for _, c := range f.Cycles {
			rows = append(rows, []string{strconv.Itoa(c.Cycle), c.Node, secOrNever(c.CatchUpS), page.F(c.BlocksPerS, 1), strconv.Itoa(c.Duplicates), page.DashIfEmpty(c.Error)})
		}
		add(page.Table{Head: []string{"cycle", "node", "catch-up", "blocks/s", "duplicates", "error"}, Rows: rows})
		if s.Note != "" {
			add(page.Para{Text: s.Note + "."})
		}
		if v, _, err := runView(path); err == nil {
			if p, _, _ := v.Figure(FigureHeights); p != nil {
				png, err := page.RenderPNG(p)
				if err != nil {
					return nil, nil, err
				}
				file := "qa_heights_" + b + ".png"
				pngs[file] = png
				add(page.Image{Alt: "Heights, " + b, File: page.PlotsDir + "/" + file, PNG: png})
			}
		}
	}

	// Steps and Method.
	add(page.Heading{Level: 2, Text: "Steps", ID: "steps"})
	var srows [][]string
	for _, s := range x.Steps {
		srows = append(srows, []string{s.Name, s.Kind, s.Status, page.G(s.WallS) + " s", page.DashIfEmpty(s.Dir), page.DashIfEmpty(s.Error)})
	}
	add(page.Table{Head: []string{"step", "kind", "status", "wall", "directory", "error"}, Rows: srows})
	add(page.Heading{Level: 2, Text: "Method", ID: "method"})
	add(page.Para{Text: qaMethod(x, &q)})
	var prow [][]string
	for _, s := range x.Plan.Steps {
		prow = append(prow, []string{s.Name, strconv.Itoa(s.Runs), page.G(s.WallS) + " s", fmt.Sprintf("%d MiB", s.DiskBytes>>20), s.What})
	}
	add(page.Table{Head: []string{"planned step", "runs", "estimated wall", "disk", "what"}, Rows: prow})
	add(page.Para{Text: fmt.Sprintf("Plan: %d runs, estimated %s s within a budget of %s s; %d MiB of disk (%d MiB were free). %s",
		x.Plan.Runs, page.G(x.Plan.WallS), page.G(x.Plan.BudgetS), x.Plan.DiskBytes>>20, x.Plan.FreeBytes>>20, strings.Join(x.Plan.Notes, "; "))})
	if m := x.Machine; m != nil {
		add(page.Para{Text: fmt.Sprintf("Machine: %s, %d CPUs (%s), %d MiB, kernel %s, %s.", m.Hostname, m.CPUs, m.CPUModel, m.MemoryBytes>>20, m.Kernel, m.GoVersion)})
	}
	for _, w := range x.Warnings {
		add(page.Para{Text: "Warning: " + w})
	}
	return bs, pngs, nil
}

func buildRef(x *rundir.QAIndex, b string) string {
	if b == rundir.QABaseline {
		return x.Baseline.Version()
	}
	return x.Candidate.Version()
}

// qaMethod states every rule and threshold the QA judged with.
func qaMethod(x *rundir.QAIndex, q *rundir.QAConfig) string {
	search := fmt.Sprintf("a saturation search at c = %d from %s tx/s (at most %s), %s probes, %d to %d repeats each, precision %s %%, at most %d probes per build",
		q.Connections, page.G(q.StartRate), page.G(q.MaxRate), q.ProbeDuration, q.ProbeRepeats, q.ProbeMax, page.G(q.Precision*100), q.SearchBudget)
	if q.Grid {
		search = fmt.Sprintf("the QA grid c = %d x r %v, %s cells", q.Connections, q.Rates, q.ProbeDuration)
	}
	le := "off"
	if q.LE {
		le = fmt.Sprintf("%d run(s) per build with the AWS zone table and random zones from the seed", q.LERepeats)
	}
	step1 := fmt.Sprintf("Step 1 runs %s, baseline then candidate (each build's probes on its own testnet). A build's saturation is a bracket [highest sustainable, lowest saturated); the candidate regresses when every rate its bracket allows is more than %s %% below every rate the baseline's allows (improves likewise above; same when every difference is within ±%s %%; else inconclusive). The chosen load is the baseline's sustainable rate backed off by %s %%.",
		search, page.G(q.SaturationThreshold), page.G(q.SaturationThreshold), page.G(q.Margin*100))
	if !q.Grid && q.MinPairs > 0 {
		step1 = fmt.Sprintf("Step 1 runs %s for the baseline alone, to find its operating point; then pairs of runs, one of each build at %s x the baseline's highest sustainable rate (%s each, a fresh testnet per run, %s), and decides by the ratio of the two builds' committed tx/s under overload: %s. The chosen load is the baseline's sustainable rate backed off by %s %%.",
			search, page.G(q.Overload), q.PairDuration, rundir.PairOrderWords(q.PairOrder), pairedRuleText(q), page.G(q.Margin*100))
	}
	return strings.Join([]string{
		step1,
		fmt.Sprintf("Step 2 runs %d runs per build of %s, interleaved, a fresh testnet each; while a metric of %s is inconclusive another pair runs, up to %d per build, within the budget less the planned time of the steps after it. A metric regresses when worse by more than %s %% with its whole 95 %% bootstrap interval beyond the threshold, and passes (non-inferiority) when its interval lies wholly below the threshold on the worse side. The steady test fails on a regression of a judged metric, is inconclusive when one is inconclusive, else passes.",
			q.Repeats, q.Duration, strings.Join(q.FailOn, ", "), q.MaxRepeats, page.G(q.Threshold)),
		"Step 3 (latency emulation): " + le + ".",
		fmt.Sprintf("Step 4 runs the rotating testbed once per build with %d cycles over a %s load (the seeds ran 25 over 5229 s; scaled to this machine). It fails when a cycle does not catch up within its timeout; the mean catch-up time regresses when more than %s %% (and at least %s) slower than the baseline's; duplicates are counted.",
			q.Cycles, q.RotateDuration, page.G(q.CatchUpThreshold), q.CatchUpFloor),
		"Scaled down from the seeds' 200-node testnets (175 validators, 20 full nodes, 5 seeds) because this 2-core machine runs every node: the capacity model sizes the testbed so that the chain keeps its nominal block rate under load; the header of the QA manifest gives the figures.",
		fmt.Sprintf("Testbed: %s; rotating testbed: %s. Result mapping: Fail (exit 3) when a judged scenario fails, else Inconclusive (exit 4) when one is inconclusive, else Pass (exit 0).", x.Manifest, page.DashIfEmpty(x.RotateManifest)),
	}, " ")
}

func qaCompare(dir string, x *rundir.QAIndex, step string) *qaCmp {
	s := x.Step(step)
	if s == nil || s.Dir == "" {
		return nil
	}
	p := rundir.StepPath(dir, s)
	idx, err := rundir.CompareRecord.Read(p)
	if err != nil {
		return nil
	}
	return &qaCmp{idx, p}
}

// qaCmp is a comparison step: its index and directory.
type qaCmp struct {
	*rundir.CompareIndex
	dir string
}

// qaRun is the build's representative run for the side-by-side panels: of
// its finished runs, the one with the median H+1 latency p50 (the lower
// median of an even count; ties by repeat), so that a panel shows neither
// the best nor the worst repeat, loaded with its kind's view (whose
// reports it sets in kind). It also says which ("repeat 2 of 3").
func qaRun(c *qaCmp, build string, kind *Kind) (RunView, string) {
	if c == nil {
		return nil, ""
	}
	type cand struct {
		path   string
		repeat int
		p50    float64
	}
	var cs []cand
	for _, r := range c.Runs {
		if r.Variant != build || r.Status != rundir.RunDone {
			continue
		}
		path := r.RunPath(c.dir)
		d, err := openRun(path)
		if err != nil {
			continue
		}
		res, err := d.ReadResults()
		if err != nil {
			continue
		}
		cs = append(cs, cand{path, r.Repeat, res.Latency.P50})
	}
	if len(cs) == 0 {
		return nil, ""
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].p50 != cs[j].p50 {
			return cs[i].p50 < cs[j].p50
		}
		return cs[i].repeat < cs[j].repeat
	})
	m := cs[(len(cs)-1)/2]
	v, k, err := runView(m.path)
	if err != nil {
		return nil, ""
	}
	*kind = k
	return v, fmt.Sprintf("repeat %d of %d", m.repeat, len(cs))
}

// openRun opens a run directory of a step, as a run's report would.
func openRun(path string) (*rundir.Dir, error) {
	if err := CheckRunDir(path); err != nil {
		return nil, err
	}
	return rundir.Open(path)
}

// secOrNever is a time in seconds, or "never" for a negative one (a node
// that never caught up).
// sideTPS is one side of a pair: "–" for an excluded run that measured
// nothing, rather than a 0 that reads as a measurement.
func sideTPS(v float64, excluded string) string {
	if excluded != "" && v == 0 {
		return "–"
	}
	return page.F(v, 1)
}

// notRun says why a step has no directory: its status and note when the
// index has them ("skipped: --skip rotate").
func notRun(s *rundir.QAStep) string {
	if s == nil || s.Status == "" || s.Status == rundir.StepPending {
		return "not run"
	}
	why := s.Status
	if s.Note != "" {
		why += ": " + s.Note
	} else if s.Error != "" {
		why += ": " + s.Error
	}
	return why
}

func secOrNever(v float64) string {
	if v < 0 {
		return "never"
	}
	return page.F(v, 1)
}

// shareAxes gives the panels one x and one y range (the union of those
// with data), so a row compares heights by eye rather than by tick labels.
func shareAxes(ps []*plot.Plot) {
	var have []*plot.Plot
	for _, p := range ps {
		if p.X.Min < p.X.Max || p.Y.Min < p.Y.Max {
			have = append(have, p)
		}
	}
	if len(have) < 2 {
		return
	}
	x0, x1, y0, y1 := have[0].X.Min, have[0].X.Max, have[0].Y.Min, have[0].Y.Max
	for _, p := range have[1:] {
		x0, x1 = min(x0, p.X.Min), max(x1, p.X.Max)
		y0, y1 = min(y0, p.Y.Min), max(y1, p.Y.Max)
	}
	for _, p := range have {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = x0, x1, y0, y1
	}
}

// tilePNG draws plots side by side in one PNG.
func tilePNG(ps []*plot.Plot) ([]byte, error) {
	w, h := vg.Length(len(ps))*6*vg.Inch, 4*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: len(ps), PadX: vg.Millimeter * 4}
	cs := plot.Align([][]*plot.Plot{ps}, t, dc)
	for i, p := range ps {
		p.Draw(cs[0][i])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// qaOverlay: committed vs offered of both builds' cells.
func qaOverlay(sweeps map[string]*rundir.SweepIndex) *plot.Plot {
	p := page.NewPlot("Committed vs offered, both builds", "offered (tx/s)", "committed (tx/s)")
	top := 0.0
	n := 0
	for i, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		x := sweeps[b]
		if x == nil {
			continue
		}
		var xy plotter.XYs
		for _, c := range x.Cells {
			if c.Status != rundir.CellDone || c.Figures == nil {
				continue
			}
			xy = append(xy, plotter.XY{X: c.Figures.Offered, Y: c.Figures.TPS})
			top = max(top, c.Figures.Offered, c.Figures.TPS)
		}
		if len(xy) == 0 {
			continue
		}
		sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
		s, err := plotter.NewScatter(xy)
		if err != nil {
			continue
		}
		s.GlyphStyle.Color = qaColors[i]
		s.GlyphStyle.Radius = vg.Points(3)
		p.Add(s)
		p.Legend.Add(b, s)
		n++
	}
	if n == 0 {
		return nil
	}
	diag, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(diag)
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

var qaColors = []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}}

// pairedRuleText is the paired rule of a QA configuration, as judge states it.
func pairedRuleText(q *rundir.QAConfig) string {
	r := judge.DefaultPairedRule()
	r.Threshold, r.MinPairs, r.MaxPairs = q.SaturationThreshold/100, q.MinPairs, q.MaxPairs
	return r.String()
}
