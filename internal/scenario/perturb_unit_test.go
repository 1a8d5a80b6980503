package scenario

import (
	"slices"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

// TestActions: steps become testnet calls in time order; a restart is a
// stop and a start For later, a wipe-restart a stop, a wipe and a start,
// the end of a kill's For a start.
func TestActions(t *testing.T) {
	s := time.Second
	steps := []manifest.Step{
		{At: 1 * s, Action: manifest.ActKill, Nodes: []string{"v1"}, For: 5 * s},
		{At: 2 * s, Action: manifest.ActRestart, Nodes: []string{"v2"}, For: 1 * s},
		{At: 4 * s, Action: manifest.ActWipeRestart, Nodes: []string{"f0"}, For: 3 * s},
		{At: 6 * s, Action: manifest.ActRestart, Nodes: []string{"v1"}, Undo: true},
		{At: 6 * s, Action: manifest.ActPause, Nodes: []string{"v3"}},
	}
	var got []string
	for _, a := range actions(steps) {
		got = append(got, a.at.String()+" "+a.do+" "+a.step.Nodes[0])
	}
	want := []string{"1s kill v1", "2s stop v2", "3s start v2", "4s stop f0", "4s wipe f0", "6s start v1", "6s pause v3", "7s start f0"}
	if !slices.Equal(got, want) {
		t.Errorf("actions:\n%q\nwant\n%q", got, want)
	}
}
