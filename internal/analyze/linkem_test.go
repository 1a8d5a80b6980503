package analyze

import (
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

func TestMeasuredWindow(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	for _, tc := range []struct {
		name     string
		ev       []rundir.Event
		from, to time.Time
		window   string
	}{
		{"drained", []rundir.Event{{Time: at(1), Kind: rundir.EventLoadStart}, {Time: at(5), Kind: rundir.EventLoadDone}, {Time: at(7), Kind: rundir.EventDrained}}, at(1), at(7), "load_start to drained"},
		{"interrupted", []rundir.Event{{Time: at(1), Kind: rundir.EventLoadStart}, {Time: at(5), Kind: rundir.EventLoadDone}}, at(1), at(5), "load_start to load_done"},
		{"killed during the load", []rundir.Event{{Time: at(1), Kind: rundir.EventLoadStart}}, at(1), time.Time{}, "load_start to end of record"},
		{"no load", []rundir.Event{{Time: at(3), Kind: rundir.EventDrained}}, time.Time{}, time.Time{}, "whole record"},
	} {
		from, to, w := measuredWindow(tc.ev)
		if !from.Equal(tc.from) || !to.Equal(tc.to) || w != tc.window {
			t.Errorf("%s: %v %v %q, want %v %v %q", tc.name, from, to, w, tc.from, tc.to, tc.window)
		}
	}
}
