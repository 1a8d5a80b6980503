package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// runInfo is what one finished run directory gives a record: the keys
// (read from the first run of a record) and the run's own values.
type runInfo struct {
	name    string // plan.json's name
	kind    string
	load    Load
	emu     Emulation
	testbed string
	machine Machine
	builds  []Build
	started string
	run     Run // Repeat is set by the caller
}

// readRun reads a finished run directory. manifestFallback is the parent
// experiment's manifest, for a run directory without its own copy.
func readRun(dir string, manifestFallback []byte) (*runInfo, error) {
	res, err := readResults(dir)
	if err != nil {
		return nil, err
	}
	p, err := plan.Read(dir)
	if err != nil {
		return nil, err
	}
	ri := &runInfo{name: p.Name, kind: p.Kind, started: stampOf(dir, res.RunID)}
	if ri.kind == "" {
		if ri.kind, err = plan.RunKind(dir); err != nil {
			return nil, err
		}
	}
	ri.load = Load{Rate: p.Load.Rate, Connections: p.Load.Connections, DurationSec: p.Load.Duration.Seconds(), Size: p.Load.Size}
	ri.emu = Emulation{Latency: p.Network.Zones != "" || p.Network.Delay != "", Zones: p.Network.Zones}
	man, err := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	if errors.Is(err, fs.ErrNotExist) {
		man, err = manifestFallback, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, rundir.Manifest), err)
	}
	if ri.testbed, err = TestbedHash(man, p.Load); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.Manifest), err)
	}
	var m rundir.Machine
	if err := readJSON(filepath.Join(dir, rundir.MachineFile), &m); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ri.machine = Machine{CPUModel: m.CPUModel, CPUs: m.CPUs, Kernel: m.Kernel, MemoryMB: m.MemoryBytes >> 20, Governor: m.Governor}
	if ri.builds, err = readBuilds(dir); err != nil {
		return nil, err
	}
	if len(ri.builds) == 0 {
		// Written before provenance/: the plan's releases and references.
		for _, n := range p.Nodes {
			b := Build{Release: n.Release.Name + "@" + n.Release.Version, Program: n.Release.Name, Reference: n.Ref}
			if !containsBuild(ri.builds, b) {
				ri.builds = append(ri.builds, b)
			}
		}
	}
	ri.run = runOf(dir, ri.kind, res)
	return ri, nil
}

// runOf is the run's repeat row: its judged values (figures of its kind),
// latency and whether a judgement counts it.
func runOf(dir, kind string, res *rundir.Results) Run {
	r := Run{Dir: dir, Valid: res.Valid, Values: map[string]float64{}}
	if len(res.TestbedBound) > 0 {
		r.Excluded = rundir.TestbedBoundPrefix + ": " + strings.Join(res.TestbedBound, "; ")
	}
	if l := res.Latency; l.N > 0 {
		r.Latency = &Latency{N: l.N, Avg: l.Avg, Min: l.Min, P50: l.P50, P95: l.P95, P99: l.P99, Max: l.Max}
	}
	nm, err := figures.For(kind)
	var f *figures.Run
	if err == nil {
		f, err = nm.ReadFigures(dir)
	}
	if err != nil {
		// Kept with the reason: the run happened, a judgement skips it.
		if r.Excluded == "" {
			r.Excluded = "figures: " + err.Error()
		}
		return r
	}
	for k, v := range f.Values {
		r.Values[k] = v
	}
	return r
}

func containsBuild(bs []Build, b Build) bool {
	for _, x := range bs {
		if x.Release == b.Release && x.Program == b.Program {
			return true
		}
	}
	return false
}

// record is a new record keyed by this run's testbed, load, machine and
// builds.
func (ri *runInfo) record(sc scope, kind, part string) *Record {
	scenario := sc.scenario
	if scenario == "" {
		scenario = ri.name
	}
	if part == "" {
		part = strings.TrimSuffix(sc.prefix, "/") // a QA's run step: its name
	} else {
		part = sc.prefix + part
	}
	return &Record{
		Source: sc.source, Part: part, Kind: kind, Step: sc.step, Variant: sc.variant,
		Scenario: scenario, NodeKind: ri.kind, TestbedHash: ri.testbed, Load: ri.load, Emulation: ri.emu,
		Machine: ri.machine, Builds: ri.builds, Started: ri.started,
	}
}

// readResults reads results.json, saying what is missing when the run
// never got that far.
func readResults(dir string) (*rundir.Results, error) {
	data, err := os.ReadFile(filepath.Join(dir, rundir.ResultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &UnfinishedError{Dir: dir, Missing: rundir.ResultsFile, Hint: "the run did not finish; 'benchnet analyze " + dir + "' makes it"}
	}
	if err != nil {
		return nil, err
	}
	res, err := rundir.DecodeResults(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return res, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// stampOf is when a run started: its directory's timestamp (rundir.Stamp,
// UTC), or its run id's.
func stampOf(dir, runID string) string {
	for _, s := range []string{filepath.Base(dir), runID} {
		if len(s) >= 15 {
			if t, err := time.Parse("20060102-150405", s[:15]); err == nil {
				return t.UTC().Format(time.RFC3339)
			}
		}
	}
	return ""
}

// TestbedHash is a testbed's identity in the history: the manifest as
// manifest.Canonical makes it (the calibration record's identity too;
// the record keys on the scenario, the build and the load profile
// elsewhere), plus the plan's load with its profile fields (rate,
// connections, duration, count, size) cleared. The same testbed run on
// two builds, or at two loads, has one hash.
func TestbedHash(manifestTOML []byte, load manifest.Load) (string, error) {
	canon, err := manifest.Canonical(manifestTOML)
	if err != nil {
		return "", err
	}
	load.Rate, load.Connections, load.Duration, load.Count, load.Size = 0, 0, rundir.Duration{}, 0, 0
	l, err := json.Marshal(load)
	if err != nil {
		return "", err
	}
	return experiment.HashCanonical([][]byte{canon}, l), nil
}
