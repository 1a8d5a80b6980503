package rundir

// AccountsResults is the per-account accounting of an accounts workload
// (results.json "accounts"; internal/kinds/cometbft/analysis/accounts.go computes it).
type AccountsResults struct {
	Order         string `json:"order"`
	Accounts      int    `json:"accounts"`
	TxsPerAccount int    `json:"txs_per_account"`
	// Included: committed with code 0 (a tx in a block whose result code is
	// not 0 spent nothing but its sequence, or not even that).
	Included       int     `json:"included"`
	InclusionRatio float64 `json:"inclusion_ratio"` // Included / sent
	// FullyIncluded counts accounts whose every tx was included.
	FullyIncluded int `json:"fully_included"`
	// OutOfOrderRatio is the inclusion of the txs sent out of order (the
	// first three of each account) under order "out-of-order"; 0 otherwise.
	OutOfOrderRatio float64          `json:"out_of_order_inclusion_ratio,omitempty"`
	PerAccount      []AccountOutcome `json:"per_account"`
}

// AccountOutcome is one account's txs.
type AccountOutcome struct {
	Account int    `json:"account"`
	Node    string `json:"node"` // where its txs were sent
	Sent    int    `json:"sent"`
	// Included, Rejected (CheckTx), FailedInBlock (committed, code != 0),
	// Lost and Pending add up to Sent (plus send errors).
	Included      int `json:"included"`
	Rejected      int `json:"rejected"`
	FailedInBlock int `json:"failed_in_block"`
	Lost          int `json:"lost"`
	Pending       int `json:"pending"`
	// HighestSequence is the highest sequence included (-1: none); Gaps the
	// sequences below it not included (0 for a chain that keeps order).
	HighestSequence int64   `json:"highest_sequence"`
	Gaps            int     `json:"gaps"`
	InclusionRatio  float64 `json:"inclusion_ratio"`
	// RejectCodes counts rejections by code ("4": future sequence).
	RejectCodes map[string]int `json:"reject_codes,omitempty"`
}
