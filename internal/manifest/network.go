package manifest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The [network] value syntaxes. The link-emulation package calls these same
// parsers, so a value that passes validation is one it can apply.

// ParseJitter parses [network].jitter: a percentage of each link's one-way
// delay ("5%") or an absolute duration ("2ms"). "" means none.
func ParseJitter(s string) (frac float64, abs time.Duration, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, nil
	}
	if strings.HasSuffix(s, "%") {
		p, err := parsePercent(s)
		if err != nil {
			return 0, 0, err
		}
		return p, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxJitter {
		return 0, 0, fmt.Errorf("%q: want a percentage of the delay (\"5%%\") or a duration from 0 to %s (\"2ms\")", s, MaxJitter)
	}
	return 0, d, nil
}

// ParseLoss parses [network].loss, a percentage ("0.1%"). "" means none.
func ParseLoss(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("%q: want a percentage such as \"0.1%%\"", s)
	}
	return parsePercent(s)
}

func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("%q: want a percentage between 0%% and 100%%", s)
	}
	return v / 100, nil
}

// RateUnits are tc's bit-rate units (SI multiples). tc's "bps" means bytes
// per second, a classic trap, so byte units are rejected rather than guessed.
var RateUnits = []struct {
	Suffix string
	Mult   float64
}{
	{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
}

// ParseBandwidth parses [network].bandwidth ("10mbit", "500kbit", "1.5gbit")
// into bits per second. "" means unlimited (0).
func ParseBandwidth(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, nil
	}
	for _, u := range RateUnits {
		if num, ok := strings.CutSuffix(t, u.Suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				break
			}
			bps := v * u.Mult
			if bps < 8 || bps > 1e13 {
				return 0, fmt.Errorf("%q: out of range (8bit to 10tbit)", s)
			}
			return uint64(math.Round(bps)), nil
		}
	}
	return 0, fmt.Errorf("%q: want a positive rate with a bit unit: bit, kbit, mbit, gbit, tbit (e.g. \"10mbit\")", s)
}

// BuiltinZoneSets names the zones of each built-in zone set. internal/linkem
// holds their delays; a test there keeps the two lists in step.
var BuiltinZoneSets = map[string][]string{
	"aws": {"N_Virginia", "Canada", "N_California", "London", "Oregon", "Ireland",
		"Frankfurt", "S_Paulo", "Tokyo", "Mumbai", "Sydney", "Seoul", "Singapore"},
}

// ZoneTable is a parsed zone CSV: one-way delays between named zones.
type ZoneTable struct {
	Zones []string
	// Delay[i][j] is the one-way delay from Zones[i] to Zones[j].
	Delay [][]time.Duration
}

// CSVError is a problem at one line of a zone CSV.
type CSVError struct {
	Line int
	Msg  string
}

func (e *CSVError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// MaxZoneCSVBytes bounds a zone CSV: 1 MiB holds a matrix of several hundred
// zones, far more than any real zone set.
const MaxZoneCSVBytes = 1 << 20

// ParseZoneCSV reads CometBFT's latency format: a header "From/to,Z1,Z2,…",
// then one row per source zone with one-way delays in (possibly fractional)
// ms. Rows may come in any order but must cover exactly the header's zones.
// Errors are *CSVError with the line.
func ParseZoneCSV(r io.Reader) (*ZoneTable, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	var recs [][]string
	var lines []int // line of each record (csv skips blank lines)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &CSVError{Line: max(pe.Line, 1), Msg: pe.Err.Error()}
			}
			return nil, &CSVError{Line: max(len(lines), 1), Msg: err.Error()}
		}
		l, _ := cr.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, l)
	}
	if len(recs) < 2 || len(recs[0]) < 2 {
		return nil, &CSVError{Line: 1, Msg: "want a header row \"From/to,Z1,Z2,…\" and one row per zone"}
	}
	t := &ZoneTable{}
	index := map[string]int{}
	for _, z := range recs[0][1:] {
		z = strings.TrimSpace(z)
		if z == "" {
			return nil, &CSVError{Line: lines[0], Msg: "empty zone name in header"}
		}
		if _, dup := index[z]; dup {
			return nil, &CSVError{Line: lines[0], Msg: fmt.Sprintf("duplicate zone %q in header", z)}
		}
		index[z] = len(t.Zones)
		t.Zones = append(t.Zones, z)
	}
	t.Delay = make([][]time.Duration, len(t.Zones))
	for k, rec := range recs[1:] {
		ln := lines[k+1]
		src := strings.TrimSpace(rec[0])
		i, ok := index[src]
		if !ok {
			return nil, &CSVError{Line: ln, Msg: fmt.Sprintf("zone %q not in header", src)}
		}
		if t.Delay[i] != nil {
			return nil, &CSVError{Line: ln, Msg: fmt.Sprintf("zone %q listed twice", src)}
		}
		if len(rec) != len(t.Zones)+1 {
			return nil, &CSVError{Line: ln, Msg: fmt.Sprintf("%d values, want %d", len(rec)-1, len(t.Zones))}
		}
		t.Delay[i] = make([]time.Duration, len(t.Zones))
		for j, v := range rec[1:] {
			ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(ms >= 0) || ms > float64(MaxZoneDelay/time.Millisecond) {
				return nil, &CSVError{Line: ln, Msg: fmt.Sprintf("column %s: %q is not a delay in ms (0 to %d)", t.Zones[j], v, MaxZoneDelay/time.Millisecond)}
			}
			t.Delay[i][j] = time.Duration(ms * float64(time.Millisecond))
		}
	}
	for i, row := range t.Delay {
		if row == nil {
			return nil, &CSVError{Line: lines[len(lines)-1], Msg: fmt.Sprintf("no row for zone %q", t.Zones[i])}
		}
	}
	return t, nil
}

// readZoneCSV opens a zone CSV named by the manifest: relative paths are
// resolved against the manifest's directory, never the working directory.
// Only regular files are read (a FIFO or device would block or never end).
func readZoneCSV(manifestDir, spec string) (string, *ZoneTable, error) {
	path := spec
	if !filepath.IsAbs(path) {
		path = filepath.Join(manifestDir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fi, err := os.Stat(path)
	if err != nil {
		return path, nil, fmt.Errorf("%q is neither a built-in zone set (%s) nor a readable CSV file: %w", spec, builtinNames(), err)
	}
	if !fi.Mode().IsRegular() {
		return path, nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxZoneCSVBytes {
		return path, nil, fmt.Errorf("%s is %d bytes, more than the %d a zone CSV may have", path, fi.Size(), MaxZoneCSVBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return path, nil, err
	}
	defer f.Close()
	t, err := ParseZoneCSV(io.LimitReader(f, MaxZoneCSVBytes))
	return path, t, err
}

func builtinNames() string {
	names := make([]string, 0, len(BuiltinZoneSets))
	for n := range BuiltinZoneSets {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
