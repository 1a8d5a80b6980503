package judge

// The exit codes of verdicts: the one list, for every command (the CLI's
// root adds its own for failures, usage and interrupts around these).
const (
	// ExitPass: every judged verdict passed (same or better).
	ExitPass = 0
	// ExitRegression: a judged metric regressed, a threshold failed, a
	// cycle never caught up, or (asked for equivalence) the variants are
	// not equivalent.
	ExitRegression = 3
	// ExitInconclusive: the data cannot decide.
	ExitInconclusive = 4
)
