package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The lab's noise: what paired and steady runs of one build against
// itself vary by on this machine and testbed. A calibration record is
// made from finished QA directories (an A/A QA, or the pairs of any QA,
// whose spread does not depend on the true ratio); the QA's plan reads it
// to say, before running, how many pairs a decision needs here.

// Calibration is the record of one machine and testbed.
type Calibration struct {
	// Key: what makes two records comparable.
	Machine     CalibMachine `json:"machine"`
	TestbedHash string       `json:"testbed_hash"`
	Profile     string       `json:"profile"`
	Made        string       `json:"made"`
	QAs         []string     `json:"qas"`
	// Capacity: the paired runs' ln(candidate/baseline) spread, pooled
	// over the QAs (each QA's pairs around their own mean).
	CapacityPairs int     `json:"capacity_pairs"`
	CapacitySD    float64 `json:"capacity_sd_log"`
	// Metrics: each steady metric's run-to-run spread (coefficient of
	// variation over the A/A QAs' steady runs, pooled within QAs).
	Metrics []CalibMetric `json:"metrics"`
}

// CalibMachine is the machine's fingerprint.
type CalibMachine struct {
	CPUModel string `json:"cpu_model"`
	CPUs     int    `json:"cpus"`
	Kernel   string `json:"kernel"`
	MemoryMB int64  `json:"memory_mb"`
	Benchnet string `json:"benchnet"`
}

// CalibMetric is one steady metric's spread.
type CalibMetric struct {
	Key  string  `json:"key"`
	Runs int     `json:"runs"`
	CV   float64 `json:"cv"`
	// MDE at 2 and 3 runs per side (a fraction; paired t, 80 % power).
	MDE2 float64 `json:"mde_2"`
	MDE3 float64 `json:"mde_3"`
}

// Fingerprint is m as a calibration key.
func Fingerprint(m *rundir.Machine, version string) CalibMachine {
	if m == nil {
		return CalibMachine{Benchnet: version}
	}
	return CalibMachine{CPUModel: m.CPUModel, CPUs: m.CPUs, Kernel: m.Kernel, MemoryMB: m.MemoryBytes >> 20, Benchnet: version}
}

// Same machine and testbed (the benchnet version is recorded, not keyed:
// a new version does not change the machine's noise).
func (c *Calibration) Matches(fp CalibMachine, testbed string) bool {
	return c.Machine.CPUModel == fp.CPUModel && c.Machine.CPUs == fp.CPUs && c.Machine.Kernel == fp.Kernel && c.TestbedHash == testbed
}

// PairsFor is the pairs a decision at threshold t needs at this spread
// (0: unknown or more than max).
func (c *Calibration) PairsFor(t float64, maxN int) int {
	if c == nil || c.CapacityPairs < 3 || c.CapacitySD <= 0 {
		return 0
	}
	return judge.PairsFor(c.CapacitySD, t, 0.95, maxN)
}

// TestbedHash is a QA's testbeds' identity: the manifests' bytes and the
// QA configuration.
func TestbedHash(manifests [][]byte, config []byte) string {
	h := uint64(14695981039346656037)
	for _, b := range append(manifests, config) {
		for _, c := range b {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return fmt.Sprintf("%016x", h)
}

// QADirRecord is what one QA directory holds for calibration.
type QADirRecord struct {
	Dir    string
	Index  *rundir.QAIndex
	Pairs  []judge.Pair
	Steady []judge.RecordedRun
}

// ReadQAForCalibration reads a QA directory's counted pairs and, when
// its builds are the same reference (A/A), its steady runs by block.
func ReadQAForCalibration(dir string) (*QADirRecord, error) {
	x, err := rundir.ReadQA(dir)
	if err != nil {
		return nil, err
	}
	r := &QADirRecord{Dir: dir, Index: x}
	if x.Saturation != nil {
		for _, p := range x.Saturation.JudgePairs() {
			if p.Excluded == "" && p.Base > 0 && p.Cand > 0 {
				r.Pairs = append(r.Pairs, p)
			}
		}
	}
	if x.Baseline.Ref != x.Candidate.Ref {
		return r, nil
	}
	s := x.Step("steady")
	if s == nil || s.Dir == "" {
		return r, nil
	}
	root := rundir.StepPath(dir, s)
	idx, err := ReadCompareIndex(root)
	if err != nil {
		return r, nil
	}
	nm, err := NodeMetricsFor("")
	if err != nil {
		return nil, err
	}
	for _, run := range idx.Runs {
		if run.Status != rundir.RunDone {
			continue
		}
		f, err := nm.ReadFigures(RunPath(root, run))
		if err != nil || len(f.Blocks) < 2 || (f.Results != nil && len(f.Results.TestbedBound) > 0) {
			continue // the testbed's noise, not the lab's
		}
		rr := judge.RecordedRun{Build: run.Variant}
		for _, b := range f.Blocks {
			var lat float64
			for _, l := range b.Latencies {
				lat += l
			}
			rr.Blocks = append(rr.Blocks, [3]float64{float64(b.Txs), round6(b.Sec), round6(lat)})
		}
		r.Steady = append(r.Steady, rr)
	}
	return r, nil
}

// Calibrate pools QA directories of one machine and testbed into a
// record.
func Calibrate(recs []*QADirRecord, version string, now time.Time) (*Calibration, error) {
	if len(recs) == 0 {
		return nil, errors.New("no QA directory")
	}
	first := recs[0].Index
	c := &Calibration{Machine: Fingerprint(first.Machine, version), Profile: first.Profile, Made: now.UTC().Format(time.RFC3339)}
	var ss float64
	var df int
	steady := map[string][]float64{} // per metric: deviations of ln(value) from its QA's mean
	var steadyDF = map[string]int{}
	for _, r := range recs {
		if fp := Fingerprint(r.Index.Machine, version); fp.CPUModel != c.Machine.CPUModel || fp.CPUs != c.Machine.CPUs || fp.Kernel != c.Machine.Kernel {
			return nil, fmt.Errorf("%s ran on another machine (%s, %d cores, kernel %s) than %s: calibrate each machine apart", r.Dir, fp.CPUModel, fp.CPUs, fp.Kernel, recs[0].Dir)
		}
		if abs, err := filepath.Abs(r.Dir); err == nil {
			c.QAs = append(c.QAs, abs)
		} else {
			c.QAs = append(c.QAs, r.Dir)
		}
		if len(r.Pairs) >= 2 {
			var d []float64
			for _, p := range r.Pairs {
				d = append(d, math.Log(p.Cand/p.Base))
			}
			m := mean(d)
			for _, x := range d {
				ss += (x - m) * (x - m)
			}
			df += len(d) - 1
			c.CapacityPairs += len(d)
		}
		for _, sm := range calibStats {
			var xs []float64
			for _, run := range r.Steady {
				if v := sm.stat(run.Blocks); v > 0 {
					xs = append(xs, math.Log(v))
				}
			}
			if len(xs) >= 2 {
				m := mean(xs)
				for _, x := range xs {
					steady[sm.key] = append(steady[sm.key], x-m)
				}
				steadyDF[sm.key] += len(xs) - 1
			}
		}
	}
	if df > 0 {
		c.CapacitySD = round6(math.Sqrt(ss / float64(df)))
	}
	keys := make([]string, 0, len(steady))
	for k := range steady {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var s2 float64
		for _, x := range steady[k] {
			s2 += x * x
		}
		cv := math.Sqrt(s2 / float64(steadyDF[k]))
		// Two independent runs' difference has sqrt(2) x the spread.
		c.Metrics = append(c.Metrics, CalibMetric{Key: k, Runs: len(steady[k]), CV: round6(cv),
			MDE2: round6(judge.MDE(cv*math.Sqrt2, 2, 0.95, 0.8)), MDE3: round6(judge.MDE(cv*math.Sqrt2, 3, 0.95, 0.8))})
	}
	return c, nil
}

var calibStats = []struct {
	key  string
	stat func([][3]float64) float64
}{
	{"tps", func(b [][3]float64) float64 {
		var t, s float64
		for _, x := range b {
			t, s = t+x[0], s+x[1]
		}
		return t / s
	}},
	{"blocks_per_min", func(b [][3]float64) float64 {
		var s float64
		for _, x := range b {
			s += x[1]
		}
		return 60 * float64(len(b)) / s
	}},
	{"latency_avg", func(b [][3]float64) float64 {
		var t, l float64
		for _, x := range b {
			t, l = t+x[0], l+x[2]
		}
		if t == 0 {
			return 0
		}
		return l / t
	}},
}

// CalibrationPath is where this machine's records live: beside the
// release cache (BENCHNET_CACHE or ~/.cache/benchnet).
func CalibrationPath(cacheDir string) string { return filepath.Join(cacheDir, "calibration.json") }

// ReadCalibrations reads the records (none: an empty list).
func ReadCalibrations(path string) ([]Calibration, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cs []Calibration
	if err := json.Unmarshal(data, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// SaveCalibration replaces the record of c's machine and testbed (or adds
// it), written atomically.
func SaveCalibration(path string, c *Calibration) error {
	cs, err := ReadCalibrations(path)
	if err != nil {
		return err
	}
	out := cs[:0]
	for _, o := range cs {
		if !o.Matches(c.Machine, c.TestbedHash) || o.Profile != c.Profile {
			out = append(out, o)
		}
	}
	out = append(out, *c)
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return rundir.WriteAtomic(path, append(data, '\n'))
}

// FindCalibration is the record for a machine, testbed and profile (nil:
// none).
func FindCalibration(cs []Calibration, fp CalibMachine, testbed, profile string) *Calibration {
	for i := range cs {
		if cs[i].Matches(fp, testbed) && cs[i].Profile == profile {
			return &cs[i]
		}
	}
	return nil
}

// Describe is the record in a few lines.
func (c *Calibration) Describe(threshold float64, maxPairs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "calibration of %s (%d cores, kernel %s), testbed %s, %s profile, from %d QA(s):\n", c.Machine.CPUModel, c.Machine.CPUs, c.Machine.Kernel, c.TestbedHash, c.Profile, len(c.QAs))
	if c.CapacityPairs >= 2 {
		n := c.PairsFor(threshold, 1000)
		need := "more than 1000"
		if n > 0 {
			need = fmt.Sprint(n)
		}
		fmt.Fprintf(&b, "  saturation (capacity under overload): spread of ln(cand/base) %.4f over %d pairs; a %.0f %% decision needs %s pairs here (max_pairs %d)\n", c.CapacitySD, c.CapacityPairs, 100*threshold, need, maxPairs)
	}
	for _, m := range c.Metrics {
		fmt.Fprintf(&b, "  steady %s: run-to-run CV %.2f %% over %d runs; detects %.1f %% at 2 runs per side, %.1f %% at 3\n", m.Key, 100*m.CV, m.Runs, 100*m.MDE2, 100*m.MDE3)
	}
	return b.String()
}
