package report

// For the tests of package report_test, which judge fixtures with package
// experiment (it imports report through scenario, so report's own tests
// cannot).
var (
	CopyDir    = copyDir
	SoakBlocks = soakBlocks
	ChainRun   = chainRun
)
