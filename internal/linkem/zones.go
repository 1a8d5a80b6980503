package linkem

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

// Matrix is a table of one-way delays between named zones. Delay(a, b) is
// the delay of a packet sent from zone a to zone b; it need not be symmetric.
type Matrix struct {
	// Name is "aws" for the built-in set or the CSV path it was read from.
	Name  string
	Zones []string
	// Delay[i][j] is the one-way delay from Zones[i] to Zones[j].
	Delay [][]time.Duration
	index map[string]int
}

// Has reports whether the matrix knows zone z.
func (m *Matrix) Has(z string) bool { _, ok := m.index[z]; return ok }

// OneWay is the one-way delay from zone a to zone b; unknown zones (and a
// zone to itself) get zero.
func (m *Matrix) OneWay(a, b string) time.Duration {
	if m == nil {
		return 0
	}
	i, ok1 := m.index[a]
	j, ok2 := m.index[b]
	if !ok1 || !ok2 {
		return 0
	}
	return m.Delay[i][j]
}

func (m *Matrix) reindex() {
	m.index = make(map[string]int, len(m.Zones))
	for i, z := range m.Zones {
		m.index[z] = i
	}
}

// WriteCSV writes m in CometBFT's aws-latencies.csv format (whole ms), so a
// run directory can record the emulated matrix and a user can edit it.
func (m *Matrix) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"From/to"}, m.Zones...)); err != nil {
		return fmt.Errorf("write matrix header: %w", err)
	}
	for i, z := range m.Zones {
		row := []string{z}
		for j := range m.Zones {
			row = append(row, strconv.FormatFloat(float64(m.Delay[i][j])/float64(time.Millisecond), 'f', -1, 64))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write matrix row %s: %w", z, err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// Route model of the built-in zone set. Light in fibre covers ~200 km/ms;
// real routes are longer than the great circle (cables follow coasts, detour
// through exchange points), hence RouteFactor; RouteConstant covers
// serialisation, switching and the last kilometres inside each region.
// 1.5 and 2 ms were fitted to CometBFT's QA table: median relative error
// 11 %, 90th percentile 33 % (TestBuiltinVsCometBFTCSV asserts median ≤ 15 %).
const (
	FibreKmPerMs  = 200.0
	RouteFactor   = 1.5
	RouteConstant = 2 * time.Millisecond
	earthRadiusKm = 6371.0
)

// Zone is a named place on the globe.
type Zone struct {
	Name     string
	Lat, Lon float64 // degrees
}

// AWSZones are the 13 AWS regions of CometBFT's QA latency table, named as in
// its CSV, at the coordinates of the metro area each region serves.
var AWSZones = []Zone{
	{"N_Virginia", 39.04, -77.49},
	{"Canada", 45.50, -73.57},
	{"N_California", 37.35, -121.96},
	{"London", 51.51, -0.13},
	{"Oregon", 45.84, -119.70},
	{"Ireland", 53.35, -6.26},
	{"Frankfurt", 50.11, 8.68},
	{"S_Paulo", -23.55, -46.63},
	{"Tokyo", 35.68, 139.69},
	{"Mumbai", 19.08, 72.88},
	{"Sydney", -33.87, 151.21},
	{"Seoul", 37.57, 126.98},
	{"Singapore", 1.35, 103.82},
}

// GreatCircleKm is the haversine distance between two zones.
func GreatCircleKm(a, b Zone) float64 {
	rad := math.Pi / 180
	dLat := (b.Lat - a.Lat) * rad
	dLon := (b.Lon - a.Lon) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) +
		math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKm * math.Asin(math.Sqrt(h))
}

// DeriveMatrix builds a symmetric matrix from coordinates:
// delay = distance / FibreKmPerMs × RouteFactor + RouteConstant, rounded to
// whole milliseconds; zero on the diagonal.
func DeriveMatrix(name string, zones []Zone) *Matrix {
	m := &Matrix{Name: name, Delay: make([][]time.Duration, len(zones))}
	for i, a := range zones {
		m.Zones = append(m.Zones, a.Name)
		m.Delay[i] = make([]time.Duration, len(zones))
		for j, b := range zones {
			if i == j {
				continue
			}
			ms := GreatCircleKm(a, b) / FibreKmPerMs * RouteFactor
			d := time.Duration(ms*float64(time.Millisecond)) + RouteConstant
			m.Delay[i][j] = d.Round(time.Millisecond)
		}
	}
	m.reindex()
	return m
}

// Builtin returns a built-in zone set by name ("aws").
func Builtin(name string) (*Matrix, bool) {
	switch name {
	case "aws":
		return DeriveMatrix("aws", AWSZones), true
	}
	return nil, false
}

// LoadMatrix resolves the manifest's [network].zones: a built-in set name or
// the path of a CSV file.
func LoadMatrix(spec string) (*Matrix, error) {
	if m, ok := Builtin(spec); ok {
		return m, nil
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("network.zones: %q is neither a built-in zone set (aws) nor a readable CSV: %w", spec, err)
	}
	defer f.Close()
	m, err := ParseCSV(f)
	if err != nil {
		return nil, fmt.Errorf("network.zones: %s: %w", spec, err)
	}
	m.Name = spec
	return m, nil
}

// ParseCSV reads CometBFT's latency format (header "From/to,Z1,Z2,…", then
// one row per source zone with one-way delays in ms). The syntax is the
// manifest's, which validates the same file before anything starts.
func ParseCSV(r io.Reader) (*Matrix, error) {
	t, err := manifest.ParseZoneCSV(r)
	if err != nil {
		return nil, fmt.Errorf("parse CSV %w", err)
	}
	m := &Matrix{Zones: t.Zones, Delay: t.Delay}
	m.reindex()
	return m, nil
}
