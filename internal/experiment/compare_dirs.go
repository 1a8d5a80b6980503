package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// DirVariant is one variant of `compare DIR_A DIR_B …`: a name and its
// finished run directories (repeats).
type DirVariant struct {
	Name string
	Dirs []string
}

// CompareDirs judges finished run directories: the first variant is the
// base. Their manifests must differ only in the keys a variant exists to
// change (releases, node config, app, transport, genesis) unless force; a machine that
// differs is a warning. The index is written into a new compare directory
// under output.
func CompareDirs(vars []DirVariant, cfg *Compare, output string, force bool, now time.Time) (string, *rundir.CompareIndex, error) {
	if len(vars) < 2 {
		return "", nil, errors.New("compare needs two or more run directories")
	}
	idx := &rundir.CompareIndex{SchemaVersion: rundir.CompareSchema, Kind: "compare", Source: "dirs", Config: rundir.CompareConfig(*cfg), Seed: CompareSeed, Complete: true}
	vars, err := expandSweeps(vars, idx)
	if err != nil {
		return "", nil, err
	}
	nm, err := dirsKind(vars, idx)
	if err != nil {
		return "", nil, err
	}
	if err := CheckFailOn(idx.NodeKind, cfg.FailOn); err != nil {
		return "", nil, err
	}
	idx.Rule = KindRuleText(cfg.Threshold, nm)
	seen := map[string]bool{}
	for i, v := range vars {
		if seen[v.Name] {
			v.Name = fmt.Sprintf("%s-%d", v.Name, i+1)
			vars[i].Name = v.Name
		}
		seen[v.Name] = true
		idx.Variants = append(idx.Variants, v.Name)
	}
	idx.Base = idx.Variants[0]
	if len(idx.Sweeps) > 0 {
		idx.Base = ""
		for _, v := range idx.Variants {
			if _, ok := idx.BaseOf[v]; !ok && idx.Base == "" {
				idx.Base = v
			}
		}
	}
	baseDir := vars[0].Dirs[0]
	baseDoc, err := manifestDoc(baseDir)
	if err != nil {
		return "", nil, err
	}
	idx.Name = nameOf(baseDoc, baseDir)
	baseMachine := readMachine(baseDir)
	var refused []string
	for _, v := range vars {
		for r, d := range v.Dirs {
			if _, err := os.Stat(filepath.Join(d, rundir.ResultsFile)); err != nil {
				return "", nil, fmt.Errorf("%s is not a finished run directory (no %s)", d, rundir.ResultsFile)
			}
			doc, err := manifestDoc(d)
			if err != nil {
				return "", nil, err
			}
			if doc == nil || baseDoc == nil {
				idx.Warnings = appendOnce(idx.Warnings, "some run directories have no manifest.toml: their manifests were not compared")
			} else if diff := manifestDiff(baseDoc, doc, nm.VariantKey); len(diff) > 0 {
				refused = append(refused, fmt.Sprintf("%s vs %s: %s", d, baseDir, strings.Join(diff, ", ")))
			}
			if m := readMachine(d); !reflect.DeepEqual(m, baseMachine) {
				idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("%s ran on another machine than %s (metrics/machine.json differs): the comparison mixes machines", d, baseDir))
			}
			idx.Runs = append(idx.Runs, rundir.CompareRun{Order: len(idx.Runs) + 1, Variant: v.Name, Repeat: r + 1, Status: rundir.RunDone, RunDir: absPath(d)})
		}
	}
	if len(refused) > 0 {
		msg := "the manifests differ beyond the keys a variant changes (" + nm.VariantKeys() + "):\n  " + strings.Join(refused, "\n  ")
		if !force {
			return "", nil, &RefusedError{msg + "\nuse --force to compare anyway"}
		}
		idx.Warnings = append(idx.Warnings, "--force: "+msg)
	}
	root, err := rundir.ClaimStamped(output, idx.Name+"-compare", now)
	if err != nil {
		return "", nil, fmt.Errorf("create compare directory: %w", err)
	}
	if err := JudgeCompare(root, idx); err != nil {
		return root, idx, err
	}
	return root, idx, WriteCompareIndex(root, idx)
}

// expandSweeps turns sweep directories (sweep.json) into one variant per
// load point (c x r) of each sweep, its done cells the repeats; with two or
// more sweeps, every sweep's point is judged against the first sweep's same
// point, and points the first sweep lacks are left out.
func expandSweeps(vars []DirVariant, idx *rundir.CompareIndex) ([]DirVariant, error) {
	type point struct {
		c int
		r float64
	}
	var sweeps []int
	for i, v := range vars {
		if len(v.Dirs) == 1 {
			if _, err := os.Stat(filepath.Join(v.Dirs[0], rundir.SweepFile)); err == nil {
				sweeps = append(sweeps, i)
			}
		}
	}
	if len(sweeps) == 0 {
		return vars, nil
	}
	if len(sweeps) != len(vars) {
		return nil, &RefusedError{"compare either sweeps or run directories, not both"}
	}
	idx.BaseOf = map[string]string{}
	var out []DirVariant
	var basePoints map[point]string
	for k, v := range vars {
		x, err := rundir.SweepRecord.Read(v.Dirs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Dirs[0], err)
		}
		if x.Grouped() {
			// Its cells of one (c, r) are several variants' or durations':
			// pooling them would compare a mixture.
			return nil, &RefusedError{fmt.Sprintf("%s is a sweep over variants or durations: compare the run directories of its cells instead", v.Dirs[0])}
		}
		idx.Sweeps = append(idx.Sweeps, rundir.SweepRef{Label: v.Name, Dir: absPath(v.Dirs[0])})
		cells := map[point][]string{}
		var order []point
		for _, c := range x.Cells {
			if c.Status != rundir.CellDone || c.RunDir == "" {
				continue
			}
			p := point{c.Connections, c.Rate}
			if _, ok := cells[p]; !ok {
				order = append(order, p)
			}
			cells[p] = append(cells[p], filepath.Join(v.Dirs[0], c.RunDir))
		}
		sort.Slice(order, func(i, j int) bool {
			if order[i].c != order[j].c {
				return order[i].c < order[j].c
			}
			return order[i].r < order[j].r
		})
		points := map[point]string{}
		for _, p := range order {
			name := fmt.Sprintf("%s c%d r%g", v.Name, p.c, p.r)
			if k > 0 {
				base, ok := basePoints[p]
				if !ok {
					continue
				}
				idx.BaseOf[name] = base
			}
			points[p] = name
			out = append(out, DirVariant{Name: name, Dirs: cells[p]})
		}
		if k == 0 {
			basePoints = points
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the sweeps have no finished cell")
	}
	return out, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func readMachine(dir string) *rundir.Machine {
	d, err := rundir.Open(dir)
	if err != nil {
		return nil
	}
	m, err := d.ReadMachine()
	if err != nil {
		return nil
	}
	m.GoVersion = "" // the harness's build, not the machine
	return m
}

// manifestDoc is a run directory's manifest.toml as a generic document.
func manifestDoc(dir string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a sweep's cell keeps its manifest with its testnet
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	m, err := manifest.Parse(filepath.Join(dir, rundir.Manifest), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	doc := map[string]any{}
	raw, err := toml.Marshal(m)
	if err == nil {
		err = toml.Unmarshal(raw, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", dir, err)
	}
	return doc, nil
}

func nameOf(doc map[string]any, dir string) string {
	if n, ok := doc["name"].(string); ok && n != "" {
		return n
	}
	return filepath.Base(dir)
}

// dirsKind finds the node kind of every run directory: one kind for all, or
// a refusal naming the odd one.
func dirsKind(vars []DirVariant, idx *rundir.CompareIndex) (figures.NodeMetrics, error) {
	first := ""
	for _, v := range vars {
		for _, d := range v.Dirs {
			k, err := plan.RunKind(d)
			if err != nil {
				return nil, err
			}
			switch {
			case first == "":
				first = k
			case k != first:
				return nil, &RefusedError{fmt.Sprintf("%s is a %s run, %s a %s run: compare runs of one node kind", d, k, vars[0].Dirs[0], first)}
			}
		}
	}
	idx.NodeKind = first
	return figures.For(first)
}

// manifestDiff lists the dotted paths where a and b differ, variant keys
// left out.
func manifestDiff(a, b map[string]any, variantKey func(string) bool) []string {
	var out []string
	var walk func(prefix string, x, y any)
	walk = func(prefix string, x, y any) {
		if prefix != "" && variantKey(prefix) {
			return
		}
		mx, okx := x.(map[string]any)
		my, oky := y.(map[string]any)
		if okx && oky {
			keys := map[string]bool{}
			for k := range mx {
				keys[k] = true
			}
			for k := range my {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, mx[k], my[k])
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s (%v vs %v)", prefix, short(x), short(y)))
		}
	}
	walk("", a, b)
	return out
}

func short(v any) string {
	if v == nil {
		return "unset"
	}
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
