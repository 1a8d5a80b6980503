package collect

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Sample is one row of samples.csv.gz.
type Sample struct {
	TimeNs int64
	Node   string
	Metric string
	Labels string // exposition syntax, see ParseLabels
	Value  float64
}

// ErrTruncated reports a samples file cut short (an interrupted run); the
// rows before the cut are returned with it.
var ErrTruncated = errors.New("samples file truncated")

// ReadSamples reads samples.csv.gz, keeping the rows whose metric passes keep
// (all when keep is nil). A file cut mid-write yields its complete rows and
// an error wrapping ErrTruncated.
func ReadSamples(path string, keep func(metric string) bool) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("read samples %s: %w", path, err)
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = len(SamplesHeader)
	r.ReuseRecord = true
	var out []Sample
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, csv.ErrFieldCount) {
				return out, fmt.Errorf("read samples %s line %d: %w (%v)", path, line, ErrTruncated, err)
			}
			return out, fmt.Errorf("read samples %s line %d: %w", path, line, err)
		}
		if line == 1 {
			continue // header
		}
		if keep != nil && !keep(rec[2]) {
			continue
		}
		t, err1 := strconv.ParseInt(rec[0], 10, 64)
		v, err2 := strconv.ParseFloat(rec[4], 64)
		if err1 != nil || err2 != nil {
			return out, fmt.Errorf("read samples %s line %d: bad time or value %q %q", path, line, rec[0], rec[4])
		}
		out = append(out, Sample{TimeNs: t, Node: rec[1], Metric: rec[2], Labels: rec[3], Value: v})
	}
}
