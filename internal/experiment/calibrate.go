package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
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
	CapacityDF    int     `json:"capacity_df"`
	CapacitySD    float64 `json:"capacity_sd_log"`
	// CapacityBetweenSD is the spread of an A/A QA's mean ln(cand/base)
	// beyond what its pairs' spread explains, over CapacityBetweenQAs A/A
	// QAs of two or more pairs (judge.BetweenQAs): 0 unless the QAs' means
	// were farther from 0 than their pairs' noise explains (p <
	// judge.BetweenAlpha); the estimate before that test and its p value
	// are kept beside it.
	CapacityBetweenSD       float64 `json:"capacity_between_sd_log,omitempty"`
	CapacityBetweenQAs      int     `json:"capacity_between_qas,omitempty"`
	CapacityBetweenEstimate float64 `json:"capacity_between_estimate_log,omitempty"`
	CapacityBetweenP        float64 `json:"capacity_between_p,omitempty"`
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

// CalibMetric is one steady metric's spread over A/A rounds.
type CalibMetric struct {
	Key string `json:"key"`
	// Runs: rounds; CV: the spread of a round's ln(candidate/baseline).
	Runs int     `json:"rounds"`
	CV   float64 `json:"sd_log"`
	// MDE at 3 and 4 rounds (a fraction; paired t, 80 % power).
	MDE3 float64 `json:"mde_3"`
	MDE4 float64 `json:"mde_4"`
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
	if c.CapacityBetweenSD > 0 {
		return judge.PairsForPrior(judge.NoisePrior{SDLog: c.CapacitySD, DF: c.CapacityDF, BetweenSD: c.CapacityBetweenSD, BetweenDF: c.CapacityBetweenQAs}, t, 0.95, maxN)
	}
	return judge.PairsFor(c.CapacitySD, t, 0.95, maxN)
}

// TestbedHash is a QA's testbeds' identity: each manifest as
// manifest.Canonical makes it (its raw bytes when it does not decode) and
// the QA configuration. The history keys its records on the same
// canonical testbed. Until 2026-11-28 the raw bytes were hashed: a
// comment or the build's release changed a testbed's identity, and a
// calibration record of those days is found again only when remade
// (benchnet calibrate DIR).
func TestbedHash(manifests [][]byte, config []byte) string {
	// The configuration as compact JSON: qa.json keeps it indented, the
	// plan hashes it compact (two hashes of one testbed before: a QA's
	// plan never found the record its A/A QAs had made).
	var c bytes.Buffer
	if json.Compact(&c, config) == nil {
		config = c.Bytes()
	}
	canon := make([][]byte, 0, len(manifests))
	for _, m := range manifests {
		if c, err := manifest.Canonical(m); err == nil {
			m = c
		}
		canon = append(canon, m)
	}
	return HashCanonical(canon, config)
}

// HashCanonical is TestbedHash of manifests already made canonical
// (manifest.Canonical): the history hashes its testbeds so, having
// decoded them once.
func HashCanonical(canon [][]byte, config []byte) string {
	h := fnv.New64a()
	for _, b := range append(slices.Clone(canon), config) {
		h.Write(b)
		h.Write([]byte{0xff}) // a separator: ("ab","c") is not ("a","bc")
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// QADirRecord is what one QA directory holds for calibration.
type QADirRecord struct {
	Dir    string
	Index  *rundir.QAIndex
	Pairs  []judge.Pair
	Steady []judge.RecordedRound
}

// ReadQAForCalibration reads a QA directory's counted pairs and, when
// its builds are the same reference (A/A), its steady runs by block.
func ReadQAForCalibration(dir string) (*QADirRecord, error) {
	x, err := rundir.QARecord.Read(dir)
	if err != nil {
		return nil, err
	}
	r := &QADirRecord{Dir: dir, Index: x}
	if x.Saturation != nil {
		// Recomputed from the run directories (QAs recorded before
		// BusyThroughput kept results.json's tx_per_second).
		for _, p := range x.Saturation.Pairs {
			if p.Excluded() != "" {
				continue
			}
			b, berr := pairThroughput(dir, p.BaseDir)
			c, cerr := pairThroughput(dir, p.CandDir)
			if berr == nil && cerr == nil {
				r.Pairs = append(r.Pairs, judge.Pair{Base: b, Cand: c})
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
	nm, err := figures.For("")
	if err != nil {
		return nil, err
	}
	rounds := map[int]*judge.RecordedRound{}
	var order []int
	for _, run := range idx.Runs {
		if run.Status != rundir.RunDone {
			continue
		}
		f, err := nm.ReadFigures(run.RunPath(root))
		if err != nil || (f.Results != nil && len(f.Results.TestbedBound) > 0) {
			continue // the testbed's noise, not the lab's
		}
		rd := rounds[run.Repeat]
		if rd == nil {
			rd = &judge.RecordedRound{}
			rounds[run.Repeat] = rd
			order = append(order, run.Repeat)
		}
		vals := map[string]float64{}
		for _, k := range calibKeys {
			if v, ok := f.Values[k]; ok {
				vals[k] = round6(v)
			}
		}
		if run.Variant == rundir.QABaseline {
			rd.Base = vals
		} else {
			rd.Cand = vals
		}
	}
	for _, k := range order {
		if rd := rounds[k]; rd.Base != nil && rd.Cand != nil {
			r.Steady = append(r.Steady, *rd)
		}
	}
	return r, nil
}

// calibKeys are the steady metrics the record and the simulation keep.
var calibKeys = []string{"tps", "latency_avg", "latency_p95", "blocks_per_min"}

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
	var aaMeans []judge.QAMean       // each A/A QA's mean log ratio, for the between-QA spread
	steady := map[string][]float64{} // per metric: each round's ln(cand/base)
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
			if r.Index.Baseline.Ref == r.Index.Candidate.Ref {
				aaMeans = append(aaMeans, judge.QAMean{Mean: m, N: len(d)})
			}
		}
		for _, rd := range r.Steady {
			for _, k := range calibKeys {
				if b, v := rd.Base[k], rd.Cand[k]; b > 0 && v > 0 {
					steady[k] = append(steady[k], math.Log(v/b))
				}
			}
		}
	}
	if df > 0 {
		c.CapacitySD, c.CapacityDF = round6(math.Sqrt(ss/float64(df))), df
		if len(aaMeans) >= 2 {
			b := judge.BetweenQAs(aaMeans, ss/float64(df), df)
			c.CapacityBetweenQAs = len(aaMeans)
			c.CapacityBetweenSD, c.CapacityBetweenEstimate, c.CapacityBetweenP = round6(b.SD), round6(b.Estimate), round6(b.P)
		}
	}
	for _, k := range calibKeys {
		d := steady[k]
		if len(d) < 2 {
			continue
		}
		// The rounds' log ratios around zero (A/A: the true ratio is 1).
		var s2 float64
		for _, x := range d {
			s2 += x * x
		}
		sd := math.Sqrt(s2 / float64(len(d)))
		c.Metrics = append(c.Metrics, CalibMetric{Key: k, Runs: len(d), CV: round6(sd),
			MDE3: round6(judge.MDE(sd, 3, 0.95, 0.8)), MDE4: round6(judge.MDE(sd, 4, 0.95, 0.8))})
	}
	return c, nil
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

// ForQA is what a QA judges with (nil: too little recorded): the pairs'
// spread with its degrees of freedom, each steady metric's with its
// rounds'.
func (c *Calibration) ForQA() *rundir.QACalibration {
	if c == nil || c.CapacityPairs < 3 || c.CapacitySD <= 0 {
		return nil
	}
	df := c.CapacityDF
	if df == 0 { // a record from before capacity_df: pooled within each QA
		df = c.CapacityPairs - len(c.QAs)
	}
	capacity := judge.NoisePrior{SDLog: c.CapacitySD, DF: df}
	if c.CapacityBetweenSD > 0 {
		capacity.BetweenSD, capacity.BetweenDF = c.CapacityBetweenSD, c.CapacityBetweenQAs
	}
	q := &rundir.QACalibration{Made: c.Made, QAs: len(c.QAs), Capacity: capacity, Steady: map[string]judge.NoisePrior{}}
	for _, m := range c.Metrics {
		if m.CV > 0 && m.Runs >= 2 {
			q.Steady[m.Key] = judge.NoisePrior{SDLog: m.CV, DF: m.Runs}
		}
	}
	return q
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
	switch {
	case c.CapacityBetweenSD > 0:
		fmt.Fprintf(&b, "  saturation, between A/A QAs: a QA's mean ratio varies by %.4f on the log scale beyond its pairs' spread (%d A/A QAs, p = %.3f); every paired interval carries it\n", c.CapacityBetweenSD, c.CapacityBetweenQAs, c.CapacityBetweenP)
	case c.CapacityBetweenQAs >= 2:
		fmt.Fprintf(&b, "  saturation, between A/A QAs: no offset found (%d A/A QAs' means within their pairs' noise, p = %.3f; estimate %.4f); the paired intervals rest on their pairs' spread\n", c.CapacityBetweenQAs, c.CapacityBetweenP, c.CapacityBetweenEstimate)
	}
	for _, m := range c.Metrics {
		fmt.Fprintf(&b, "  steady %s: spread of a round's ln(cand/base) %.4f over %d rounds; detects %.1f %% at 3 rounds, %.1f %% at 4\n", m.Key, m.CV, m.Runs, 100*m.MDE3, 100*m.MDE4)
	}
	return b.String()
}

// pairThroughput is a paired run's BusyThroughput from its directory.
func pairThroughput(qaDir, rel string) (float64, error) {
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(qaDir, rel)
	}
	d := &rundir.Dir{Path: p}
	res, err := d.ReadResults()
	if err != nil {
		return 0, err
	}
	ls, err := d.ReadLoad()
	if err != nil {
		return 0, err
	}
	return BusyThroughput(d, ls, res.Accounting.Committed)
}
