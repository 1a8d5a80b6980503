//go:build race

package load

// raceEnabled: the race detector slows sends ~10×, so timing assertions
// (validity at 500 tx/s) are skipped under it.
const raceEnabled = true
