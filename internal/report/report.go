// Package report turns a run directory into report.md (GitHub-renderable,
// PNG plots in plots/ beside it) and report.html (one self-contained file,
// plots embedded as data URIs, opens offline).
//
// A report is a pure function of the run directory: it reads only the files
// the earlier stages wrote (manifest.toml, plan.json, provenance/,
// results.json, load.json, txs.csv, blocks.csv, mempool.csv, events.jsonl,
// metrics/, linkem/), never asks a node anything, and writes the same
// bytes for the same data (times are
// relative to an origin taken from the data, iteration is sorted, floats have
// fixed precision). A missing file makes its table or plot say "no data".
// It opens with the headline a QA engineer reads first (verdict, committed
// TPS, latency p50/p99, accounting, offered load), then the details, the
// plots, and the parameters the run was made of.
package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names, relative to the output directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
	PlotsDir     = page.PlotsDir
)

// Render reads the run directory runDir and writes the report into outDir
// (runDir when ""), with the reports its kind registered (plan.json's kind).
// It returns the paths written, report.md first. Only an unreadable run
// directory or an unwritable output fails it.
func Render(runDir, outDir string) ([]string, error) {
	if err := checkRunDir(runDir); err != nil {
		return nil, err
	}
	kind, err := rundir.RunKind(runDir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	k, ok := kindOf(kind)
	if !ok || k.Render == nil {
		return nil, fmt.Errorf("report: no run report for node kind %q in this binary (have %v; import internal/kinds)", kind, kinds.Names())
	}
	return k.Render(runDir, outDir)
}

// RenderChain is the run report of a tx chain (accounting, latency, blocks,
// the nodes' metrics): a chain kind (CometBFT) registers it as its Render.
func RenderChain(runDir, outDir string) ([]string, error) {
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
	return writeDoc("report", outDir, MarkdownFile, HTMLFile, r.title(), blocks, pngs)
}

func (r *run) title() string {
	name := filepath.Base(r.dir.Path)
	if r.plan != nil && r.plan.Name != "" {
		name = r.plan.Name
	}
	return "benchnet report: " + name
}

// build lays out the report and renders the plots (file name → PNG).
func (r *run) build() ([]block, map[string][]byte, error) {
	var bs []block
	add := func(b ...block) { bs = append(bs, b...) }
	add(heading{Level: 1, Text: r.title(), ID: ""})
	kind := "" // judge reads "" as cometbft: a run with no plan.json
	if r.plan != nil {
		kind = r.plan.NodeKind()
	}
	add(ThresholdSection(r.results, kind)...)
	add(r.headlineSection()...)
	add(r.accounting()...)
	add(r.summary()...)
	add(r.runRates()...) // runviews.go
	pngs := map[string][]byte{}
	add(r.faultsSection(pngs)...)
	add(r.duplicatesSection(pngs)...) // duplicates.go
	add(heading{Level: 2, Text: "Plots", ID: "plots"})
	add(para{Text: "Time axes start at t = 0, " + r.t0From + "; dashed vertical lines mark node and load events (green: load, red: a node stopping or crashing, grey: other node events), listed in [Events](#events)."})
	if r.zoom.active() {
		add(para{Text: r.zoom.note()})
	}
	for i, f := range figures {
		add(heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.title), ID: ""})
		p, reason := f.build(r)
		if p == nil {
			add(noData{Reason: reason})
			add(para{Text: "*" + r.nsText(f.what) + "*"})
			continue
		}
		makeRoom(p)
		if r.zoom.active() {
			r.zoom.apply(p) // zoom.go
		}
		w, err := p.WriterTo(plotW, plotH, "png")
		if err != nil {
			return nil, nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		file := f.name + ".png"
		pngs[file] = buf.Bytes()
		add(image{Alt: f.title, File: PlotsDir + "/" + file, PNG: buf.Bytes()})
		add(para{Text: r.nsText(f.what)})
	}
	add(r.parameters()...)
	add(r.eventsSection()...)
	if len(r.problems) > 0 {
		add(heading{Level: 2, Text: "Problems reading the run directory", ID: ""})
		t := table{Head: []string{"problem"}}
		for _, p := range r.problems {
			t.Rows = append(t.Rows, []string{p})
		}
		add(t)
	}
	return bs, pngs, nil
}

func (r *run) parameters() []block {
	bs := []block{heading{Level: 2, Text: "Parameters", ID: "parameters"}}
	bs = append(bs, r.loadThatRan()...)
	bs = append(bs, heading{Level: 3, Text: "Manifest (as given)", ID: ""})
	if len(r.manifest) > 0 {
		bs = append(bs, code{Lang: "toml", Text: string(r.manifest)})
	} else {
		bs = append(bs, noData{Reason: "no " + rundir.Manifest})
	}
	bs = append(bs, heading{Level: 3, Text: "Nodes", ID: ""})
	if r.plan == nil || len(r.plan.Nodes) == 0 {
		bs = append(bs, noData{Reason: "no " + rundir.Plan})
	} else {
		t := table{Head: []string{"node", "role", "zone", "release", "app", "address", "persistent peers", "seeds"}}
		for _, n := range r.plan.Nodes {
			t.Rows = append(t.Rows, []string{n.Name, n.Role, n.Zone, n.Release.String(), n.App, n.Addr.String(),
				strings.Join(n.PersistentPeers, " "), strings.Join(n.Seeds, " ")})
		}
		bs = append(bs, t)
	}
	bs = append(bs, heading{Level: 3, Text: "Releases", ID: ""})
	if r.plan != nil && len(r.plan.Nodes) > 0 {
		count := map[string]int{}
		for _, n := range r.plan.Nodes {
			count[n.Release.String()]++
		}
		t := table{Head: []string{"release", "nodes", "reference", "source", "built with", "module", "sha256"}}
		for _, rel := range sortedKeys(count) {
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
		bs = append(bs, details{Summary: "provenance/" + p.file, Text: p.text})
	}
	bs = append(bs, heading{Level: 3, Text: "Machine", ID: ""})
	if m := r.machine; m != nil {
		bs = append(bs, table{Head: []string{"hostname", "kernel", "CPU", "CPUs", "memory", "harness Go"}, Rows: [][]string{{m.Hostname, m.Kernel, m.CPUModel, strconv.Itoa(m.CPUs),
			fmtF(float64(m.MemoryBytes)/(1<<30), 1) + " GiB", m.GoVersion + " " + m.OS + "/" + m.Arch}}})
	} else {
		bs = append(bs, noData{Reason: "no metrics/machine.json"})
	}
	return append(bs, r.network()...)
}

// provenanceSource reads the "key: value" header a run's provenance file
// starts with (internal/testnet): the references as written, the source
// (module and version, or a tree's revision and dirty state, or a binary's
// path) and the binary's sha256 (shortened).
func provenanceSource(text string) (ref, src, sum string) {
	kv := map[string]string{}
	var refs []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			break
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if k == "reference" {
			refs = append(refs, v)
		} else if _, seen := kv[k]; !seen {
			kv[k] = v
		}
	}
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

func (r *run) accounting() []block {
	bs := []block{heading{Level: 2, Text: "Accounting", ID: "accounting"}}
	if r.results == nil {
		return append(bs, noData{Reason: "no results.json"})
	}
	a := r.results.Accounting
	bs = append(bs, table{Head: []string{"sent", "committed", "rejected", "lost", "pending", "duplicates", "send errors"}, Rows: [][]string{{itoa(a.Sent), itoa(a.Committed), itoa(a.Rejected), itoa(a.Lost), itoa(a.Pending), itoa(a.Duplicates), itoa(a.SendErrors)}}})
	if a.Holds() {
		bs = append(bs, para{Text: "sent = committed + rejected + lost + pending: **holds**."})
	} else {
		bs = append(bs, para{Text: fmt.Sprintf("sent = committed + rejected + lost + pending: **VIOLATED** (%d ≠ %d).", a.Sent, a.Committed+a.Rejected+a.Lost+a.Pending)})
	}
	if d := r.results.Drain; d != nil && !d.Complete {
		bs = append(bs, para{Text: fmt.Sprintf("The run was interrupted and stopped waiting for the mempools after %.1f s (bound %.1f s): "+
			"a tx in no block by then is **pending**, not lost (left: %s).", d.WaitedSec, d.BoundSec, d.Left)})
	}
	return bs
}

func (r *run) summary() []block {
	bs := []block{heading{Level: 2, Text: "Summary", ID: "summary"}}
	res := r.results
	if res == nil {
		return append(bs, noData{Reason: "no results.json"})
	}
	other := "H+1"
	if res.LatencyBlock == "H+1" {
		other = "H"
	}
	b := res.BlockStats
	bs = append(bs, table{Head: []string{"measure", "value"}, Rows: [][]string{
		{"duration (s)", fmtF(res.DurationSec, 3)},
		{"throughput (committed tx/s)", fmtF(res.TxPerSecond, 2)},
		{"latency block", "time of block " + orDash(res.LatencyBlock) + " − send time"},
		{"latency avg / std (ms)", fmtMs(res.Latency.Avg) + " / " + fmtMs(res.Latency.Std)},
		{"latency min / p50 / p95 / p99 / max (ms)", strings.Join([]string{fmtMs(res.Latency.Min), fmtMs(res.Latency.P50),
			fmtMs(res.Latency.P95), fmtMs(res.Latency.P99), fmtMs(res.Latency.Max)}, " / ")},
		{"latency p50 / p99 with block " + other + " (ms)", fmtMs(res.LatencyOther.P50) + " / " + fmtMs(res.LatencyOther.P99)},
		{"heights", fmt.Sprintf("%d – %d (%d blocks)", b.FirstHeight, b.LastHeight, b.Blocks)},
		{"block interval avg (s)", fmtF(b.AvgBlockSec, 3)},
		{"txs per block avg / max", fmtF(b.AvgTxs, 1) + " / " + itoa(b.MaxTxs)},
		{"block size avg (bytes)", fmtF(b.AvgSizeBytes, 0)},
		{"peak mempool (txs)", itoa(res.PeakMempool)},
	}})
	if len(res.Load) > 0 {
		t := table{Head: []string{"node", "conn", "sent", "target rate (tx/s)", "achieved (tx/s)", "lag p99 (ms)", "lag max (ms)", "errors"}}
		for _, c := range res.Load {
			t.Rows = append(t.Rows, []string{c.Node, itoa(c.Conn), itoa(c.Sent), fmtF(c.TargetRate, 2), fmtF(c.Achieved, 2),
				fmtMs(c.LagP99Ms), fmtMs(c.LagMaxMs), itoa(c.Errors)})
		}
		bs = append(bs, heading{Level: 3, Text: "Load generator per connection", ID: ""}, t)
	}
	if len(res.Nodes) > 0 {
		t := table{Head: []string{"node", "sent", "peak mempool", "exited", "detail"}}
		for _, n := range res.Nodes {
			t.Rows = append(t.Rows, []string{n.Name, itoa(n.Sent), itoa(n.PeakMempool), strconv.FormatBool(n.Exited), n.Detail})
		}
		bs = append(bs, heading{Level: 3, Text: "Nodes", ID: ""}, t)
	}
	return bs
}

func orDash(s string) string {
	if s == "" {
		return "H"
	}
	return s
}

func (r *run) eventsSection() []block {
	bs := []block{heading{Level: 2, Text: "Events", ID: "events"}}
	if len(r.events) == 0 {
		return append(bs, noData{Reason: "no events.jsonl"})
	}
	t := table{Head: []string{"t (s)", "kind", "node", "detail", "on plots"}}
	for _, e := range r.events {
		mark := ""
		if markedEvent(e.Kind) {
			mark = "yes"
		}
		t.Rows = append(t.Rows, []string{fmtF(r.sec(e.Time.UnixNano()), 3), e.Kind, e.Node, e.Detail, mark})
	}
	return append(bs, t)
}
