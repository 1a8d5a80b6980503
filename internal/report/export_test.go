package report

import "github.com/benchnet/benchnet/internal/rundir"

// For the tests of package report_test, which judge fixtures with package
// experiment (it imports report through scenario, so report's own tests
// cannot).
var (
	CopyDir            = copyDir
	GossipRunDir       = gossipRunDir
	SoakBlocks         = soakBlocks
	CompareFigureCount = len(compareFigures)
)

// GossipFigureCount is how many plots a gossip comparison's report has.
func GossipFigureCount(idx *rundir.CompareIndex) int { return len(newGossipView(idx).figures()) }
