package gossipreport

import "github.com/benchnet/benchnet/internal/rundir"

// For the tests of package gossipreport_test, which judge fixtures with
// package experiment (it links this package in through internal/kinds,
// so this package's own tests cannot).
var GossipRunDir = gossipRunDir

// GossipFigureCount is how many plots a gossip comparison's report has.
func GossipFigureCount(idx *rundir.CompareIndex) int { return len(newGossipView(idx).Figures()) }
