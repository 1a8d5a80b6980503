package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// reportOut is the output format of test/loadtime/cmd/report (its Printf
// format string, with two experiments), durations as time.Duration prints them.
const reportOut = "Experiment ID: 6bd7d1e8-d82c-4a4e-9a3e-0e3f2b1c5d7a\n\n" +
	"\tConnections: 1\n\tRate: 200\n\tSize: 1024\n\n" +
	"\tTotal Valid Tx: 17800\n\tTotal Negative Latencies: 0\n" +
	"\tMinimum Latency: 521.110234ms\n\tMaximum Latency: 1.80412334s\n" +
	"\tAverage Latency: 1.100023411s\n\tStandard Deviation: 221.00876ms\n\n" +
	"Experiment ID: 0e9c2d55-5d4f-4a39-8c0f-7e51f0a3b2c1\n\n" +
	"\tConnections: 2\n\tRate: 400\n\tSize: 1024\n\n" +
	"\tTotal Valid Tx: 0\n\tTotal Negative Latencies: 0\n" +
	"\tMinimum Latency: 0s\n\tMaximum Latency: 0s\n" +
	"\tAverage Latency: 0s\n\tStandard Deviation: 0s\n\n" +
	"Total Invalid Tx: 12\n"

func TestParseLoadtimeReport(t *testing.T) {
	rep, err := ParseLoadtimeReport(reportOut)
	if err != nil {
		t.Fatal(err)
	}
	want := LoadtimeStats{ID: "6bd7d1e8-d82c-4a4e-9a3e-0e3f2b1c5d7a", Connections: 1, Rate: 200, Size: 1024, ValidTxs: 17800,
		Min: 521110234 * time.Nanosecond, Max: 1804123340 * time.Nanosecond, Avg: 1100023411 * time.Nanosecond,
		StdDev: 221008760 * time.Nanosecond}
	if len(rep.Experiments) != 2 || rep.Experiments[0] != want || rep.InvalidTxs != 12 || rep.Experiments[1].Connections != 2 {
		t.Errorf("parsed %+v", rep)
	}
	for _, bad := range []struct{ name, out string }{
		{"cut", reportOut[:len(reportOut)/2]},
		{"garbage", "panic: open /x/data: no such file\n"},
		{"bad duration", strings.Replace(reportOut, "221.00876ms", "221 ms", 1)},
		{"field first", "\tRate: 1\nTotal Invalid Tx: 0\n"},
	} {
		if _, err := ParseLoadtimeReport(bad.out); err == nil {
			t.Errorf("%s: accepted", bad.name)
		}
	}
}

func TestCrossCheckLoadtime(t *testing.T) {
	lt := LoadtimeStats{ValidTxs: 3, Avg: 1100023411 * time.Nanosecond}
	cases := []struct {
		name string
		r    rundir.Results
		ok   bool
	}{
		{"H+1 headline agrees", rundir.Results{LatencyBlock: "H+1", Latency: rundir.Stats{N: 3, Avg: 1100.4}}, true},
		{"H headline, other agrees", rundir.Results{LatencyBlock: "H", LatencyOther: rundir.Stats{N: 3, Avg: 1099.2}, Latency: rundir.Stats{N: 3, Avg: 90}}, true},
		{"off by 1.5 ms", rundir.Results{LatencyBlock: "H+1", Latency: rundir.Stats{N: 3, Avg: 1101.6}}, false},
		{"count differs", rundir.Results{LatencyBlock: "H+1", Latency: rundir.Stats{N: 4, Avg: 1100}}, false},
	}
	for _, tc := range cases {
		if err := CrossCheckLoadtime(&tc.r, lt, time.Millisecond); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}
