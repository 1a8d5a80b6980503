package chainreport

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Kind is the reports of a tx chain's runs: the run report (Render, and
// zoomed), the comparison view, and the run view the QA report draws its
// side-by-side panels and rotating nodes' heights with. CometBFT registers
// it as its own (below); a kind whose nodes commit txs and export
// CometBFT's metric families (a fork, another ABCI app) can register it
// under its own name too.
var Kind = report.Kind{
	Render:     Render,
	Zoomed:     renderZoomed,
	Compare:    Compare,
	View:       View,
	SideBySide: []string{"latency_per_block", "mempool_size", "peers", "rounds", "blocks_per_minute", "txs_per_minute", "block_size", "rss", "cpu", "load1"},
	SoakPlots:  []report.PlotRef{{File: "mempool_size", Title: "Mempool size"}, {File: "rss", Title: "Resident memory per node"}},
}

// CometBFT's runs are reported, and compared, as a tx chain's.
// Render is the run report of a tx chain (accounting, latency, blocks,
// the nodes' metrics) into outDir (the run directory when "").
func Render(runDir, outDir string) ([]string, error) {
	r, err := load(runDir)
	if err != nil {
		return nil, err
	}
	if outDir == "" {
		outDir = r.dir.Path
	}
	blocks, pngs, err := r.build()
	if err != nil {
		return nil, err
	}
	return page.Write("report", outDir, report.MarkdownFile, report.HTMLFile, r.title(), blocks, pngs)
}

func (r *run) title() string {
	name := filepath.Base(r.dir.Path)
	if r.plan != nil && r.plan.Name != "" {
		name = r.plan.Name
	}
	return "benchnet report: " + name
}

// build lays out the report and renders the plots (file name → PNG).
func (r *run) build() ([]page.Block, map[string][]byte, error) {
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	add(page.Heading{Level: 1, Text: r.title(), ID: ""})
	kind := "" // judge reads "" as cometbft: a run with no plan.json
	if r.plan != nil {
		kind = r.plan.NodeKind()
	}
	add(report.ThresholdSection(r.results, kind)...)
	add(r.headlineSection()...)
	add(r.accounting()...)
	add(r.summary()...)
	add(r.runRates()...) // runviews.go
	pngs := map[string][]byte{}
	add(r.faultsSection(pngs)...)
	add(r.duplicatesSection(pngs)...) // duplicates.go
	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	add(page.Para{Text: "Time axes start at t = 0, " + r.t0From + "; dashed vertical lines mark node and load events (green: load, red: a node stopping or crashing, grey: other node events), listed in [Events](#events)."})
	if r.zoom.Active() {
		add(page.Para{Text: r.zoom.Note()})
	}
	for i, f := range figures {
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.title), ID: ""})
		p, reason := f.build(r)
		if p == nil {
			add(page.NoData{Reason: reason})
			add(page.Para{Text: "*" + r.nsText(f.what) + "*"})
			continue
		}
		page.MakeRoom(p)
		if r.zoom.Active() {
			r.zoom.Apply(p) // zoom.go
		}
		w, err := p.WriterTo(page.W, page.H, "png")
		if err != nil {
			return nil, nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		file := f.name + ".png"
		pngs[file] = buf.Bytes()
		add(page.Image{Alt: f.title, File: page.PlotsDir + "/" + file, PNG: buf.Bytes()})
		add(page.Para{Text: r.nsText(f.what)})
	}
	add(r.parameters()...)
	add(r.eventsSection()...)
	if len(r.problems) > 0 {
		add(page.Heading{Level: 2, Text: "Problems reading the run directory", ID: ""})
		t := page.Table{Head: []string{"problem"}}
		for _, p := range r.problems {
			t.Rows = append(t.Rows, []string{p})
		}
		add(t)
	}
	return bs, pngs, nil
}

func (r *run) parameters() []page.Block {
	bs := []page.Block{page.Heading{Level: 2, Text: "Parameters", ID: "parameters"}}
	bs = append(bs, r.loadThatRan()...)
	bs = append(bs, page.Heading{Level: 3, Text: "Manifest (as given)", ID: ""})
	if len(r.manifest) > 0 {
		bs = append(bs, page.Code{Lang: "toml", Text: string(r.manifest)})
	} else {
		bs = append(bs, page.NoData{Reason: "no " + rundir.Manifest})
	}
	bs = append(bs, page.Heading{Level: 3, Text: "Nodes", ID: ""})
	if r.plan == nil || len(r.plan.Nodes) == 0 {
		bs = append(bs, page.NoData{Reason: "no " + rundir.Plan})
	} else {
		t := page.Table{Head: []string{"node", "role", "zone", "release", "app", "address", "persistent peers", "seeds"}}
		for _, n := range r.plan.Nodes {
			peers := strings.Join(n.PersistentPeers, " ")
			if n.Transport != "" {
				// go-libp2p dials them as bootstrap_peers.
				peers = n.Transport + " bootstrap: " + peers
			}
			t.Rows = append(t.Rows, []string{n.Name, n.Role, n.Zone, n.Release.String(), n.App, n.Addr.String(),
				peers, strings.Join(n.Seeds, " ")})
		}
		bs = append(bs, t)
	}
	bs = append(bs, page.Heading{Level: 3, Text: "Releases", ID: ""})
	if r.plan != nil && len(r.plan.Nodes) > 0 {
		count := map[string]int{}
		for _, n := range r.plan.Nodes {
			count[n.Release.String()]++
		}
		t := page.Table{Head: []string{"release", "nodes", "reference", "source", "built with", "module", "sha256"}}
		for _, rel := range page.SortedKeys(count) {
			goVer, mod, ref, src, sum := "no provenance recorded", "", "", "", ""
			for _, p := range r.provenance {
				if strings.HasPrefix(p.file, rel+"-") || strings.HasPrefix(p.file, rel+".") {
					goVer, mod = provenanceSummary(p.text)
					ref, src, sum = provenanceSource(p.text)
					break
				}
			}
			t.Rows = append(t.Rows, []string{rel, strconv.Itoa(count[rel]), ref, src, goVer, mod, sum})
		}
		bs = append(bs, t)
	}
	for _, p := range r.provenance {
		bs = append(bs, page.Details{Summary: "provenance/" + p.file, Text: p.text})
	}
	bs = append(bs, page.Heading{Level: 3, Text: "Machine", ID: ""})
	if m := r.machine; m != nil {
		bs = append(bs, page.Table{Head: []string{"hostname", "kernel", "CPU", "CPUs", "memory", "harness Go"}, Rows: [][]string{{m.Hostname, m.Kernel, m.CPUModel, strconv.Itoa(m.CPUs),
			page.F(float64(m.MemoryBytes)/(1<<30), 1) + " GiB", m.GoVersion + " " + m.OS + "/" + m.Arch}}})
	} else {
		bs = append(bs, page.NoData{Reason: "no metrics/machine.json"})
	}
	return append(bs, r.network()...)
}

// provenanceSource reads the "key: value" header a run's provenance file
// starts with (internal/testnet): the references as written, the source
// (module and version, or a tree's revision and dirty state, or a binary's
// path) and the binary's sha256 (shortened).
func provenanceSource(text string) (ref, src, sum string) {
	refs, kv := rundir.ProvenanceHeader(text)
	ref = strings.Join(refs, ", ")
	switch kv["kind"] {
	case "tree":
		src = kv["dir"]
		if rev := kv["vcs.revision"]; rev != "" {
			src += " @ " + short(rev, 12)
			if kv["vcs.dirty"] == "true" {
				src += " dirty (diff " + short(kv["vcs.diff.sha256"], 12) + ")"
			}
		} else {
			src += " (no VCS)"
		}
		src += ", content " + short(kv["content.sha256"], 12)
	case "file":
		src = "file " + kv["file"]
	case "tag", "commit":
		src = kv["module"] + " " + kv["version"]
	}
	return ref, src, short(kv["sha256"], 16)
}

func short(s string, n int) string {
	if f := strings.Fields(s); len(f) > 0 {
		s = f[0]
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}

// provenanceSummary picks the Go version and main module line of
// `go version -m` output (after the run's header, when there is one).
func provenanceSummary(text string) (goVer, mod string) {
	if i := strings.Index(text, "\n# recorded with the binary:\n"); i >= 0 {
		text = text[i+len("\n# recorded with the binary:\n"):]
	}
	if i := strings.Index(text, "\n# go version -m:\n"); i >= 0 {
		text = text[i+len("\n# go version -m:\n"):]
	}
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if i == 0 && len(f) >= 2 {
			goVer = f[len(f)-1]
		}
		if len(f) >= 3 && f[0] == "mod" {
			mod = f[1] + " " + f[2]
		}
	}
	return goVer, mod
}

func (r *run) accounting() []page.Block {
	bs := []page.Block{page.Heading{Level: 2, Text: "Accounting", ID: "accounting"}}
	if r.results == nil {
		return append(bs, page.NoData{Reason: "no results.json"})
	}
	a := r.results.Accounting
	bs = append(bs, page.Table{Head: []string{"sent", "committed", "rejected", "lost", "pending", "duplicates", "send errors"}, Rows: [][]string{{page.Itoa(a.Sent), page.Itoa(a.Committed), page.Itoa(a.Rejected), page.Itoa(a.Lost), page.Itoa(a.Pending), page.Itoa(a.Duplicates), page.Itoa(a.SendErrors)}}})
	if a.Holds() {
		bs = append(bs, page.Para{Text: "sent = committed + rejected + lost + pending: **holds**."})
	} else {
		bs = append(bs, page.Para{Text: fmt.Sprintf("sent = committed + rejected + lost + pending: **VIOLATED** (%d ≠ %d).", a.Sent, a.Committed+a.Rejected+a.Lost+a.Pending)})
	}
	if d := r.results.Drain; d != nil && !d.Complete {
		bs = append(bs, page.Para{Text: fmt.Sprintf("The run was interrupted and stopped waiting for the mempools after %.1f s (bound %.1f s): "+
			"a tx in no block by then is **pending**, not lost (left: %s).", d.WaitedSec, d.BoundSec, d.Left)})
	}
	return bs
}

func (r *run) summary() []page.Block {
	bs := []page.Block{page.Heading{Level: 2, Text: "Summary", ID: "summary"}}
	res := r.results
	if res == nil {
		return append(bs, page.NoData{Reason: "no results.json"})
	}
	other := "H+1"
	if res.LatencyBlock == "H+1" {
		other = "H"
	}
	b := res.BlockStats
	bs = append(bs, page.Table{Head: []string{"measure", "value"}, Rows: [][]string{
		{"duration (s)", page.F(res.DurationSec, 3)},
		{"throughput (committed tx/s)", page.F(res.TxPerSecond, 2)},
		{"latency block", "time of block " + orDash(res.LatencyBlock) + " − send time"},
		{"latency avg / std (ms)", page.Ms(res.Latency.Avg) + " / " + page.Ms(res.Latency.Std)},
		{"latency min / p50 / p95 / p99 / max (ms)", strings.Join([]string{page.Ms(res.Latency.Min), page.Ms(res.Latency.P50),
			page.Ms(res.Latency.P95), page.Ms(res.Latency.P99), page.Ms(res.Latency.Max)}, " / ")},
		{"latency p50 / p99 with block " + other + " (ms)", page.Ms(res.LatencyOther.P50) + " / " + page.Ms(res.LatencyOther.P99)},
		{"heights", fmt.Sprintf("%d – %d (%d blocks)", b.FirstHeight, b.LastHeight, b.Blocks)},
		{"block interval avg (s)", page.F(b.AvgBlockSec, 3)},
		{"txs per block avg / max", page.F(b.AvgTxs, 1) + " / " + page.Itoa(b.MaxTxs)},
		{"block size avg (bytes)", page.F(b.AvgSizeBytes, 0)},
		{"peak mempool (txs)", page.Itoa(res.PeakMempool)},
	}})
	if len(res.Load) > 0 {
		t := page.Table{Head: []string{"node", "conn", "sent", "target rate (tx/s)", "achieved (tx/s)", "lag p99 (ms)", "lag max (ms)", "errors"}}
		for _, c := range res.Load {
			t.Rows = append(t.Rows, []string{c.Node, page.Itoa(c.Conn), page.Itoa(c.Sent), page.F(c.TargetRate, 2), page.F(c.Achieved, 2),
				page.Ms(c.LagP99Ms), page.Ms(c.LagMaxMs), page.Itoa(c.Errors)})
		}
		bs = append(bs, page.Heading{Level: 3, Text: "Load generator per connection", ID: ""}, t)
	}
	if len(res.Nodes) > 0 {
		t := page.Table{Head: []string{"node", "sent", "peak mempool", "exited", "detail"}}
		for _, n := range res.Nodes {
			t.Rows = append(t.Rows, []string{n.Name, page.Itoa(n.Sent), page.Itoa(n.PeakMempool), strconv.FormatBool(n.Exited), n.Detail})
		}
		bs = append(bs, page.Heading{Level: 3, Text: "Nodes", ID: ""}, t)
	}
	return bs
}

func orDash(s string) string {
	if s == "" {
		return "H"
	}
	return s
}

func (r *run) eventsSection() []page.Block {
	bs := []page.Block{page.Heading{Level: 2, Text: "Events", ID: "events"}}
	if len(r.events) == 0 {
		return append(bs, page.NoData{Reason: "no events.jsonl"})
	}
	t := page.Table{Head: []string{"t (s)", "kind", "node", "detail", "on plots"}}
	for _, e := range r.events {
		mark := ""
		if markedEvent(e.Kind) {
			mark = "yes"
		}
		t.Rows = append(t.Rows, []string{page.F(r.sec(e.Time.UnixNano()), 3), e.Kind, e.Node, e.Detail, mark})
	}
	return append(bs, t)
}

// View loads runDir for the figures an experiment's report shows of it.
func View(runDir string) (report.RunView, error) {
	r, err := load(runDir)
	if err != nil {
		return nil, err // not a nil *run in a non-nil interface
	}
	return r, nil
}

// Figure draws the run report's figure name, or the node heights
// (report.FigureHeights), untitled by the run.
func (r *run) Figure(name string) (*plot.Plot, string, bool) {
	if name == report.FigureHeights {
		p, _ := plotHeights(r)
		return p, "Node heights", true
	}
	for _, f := range figures {
		if f.name == name {
			p, _ := f.build(r)
			return p, f.title, true
		}
	}
	return nil, "", false
}
