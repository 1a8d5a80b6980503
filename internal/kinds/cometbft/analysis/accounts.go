package analysis

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// accountsResults is the per-account accounting of an accounts workload
// (nil for any other run). The load gives account a connection a and the
// run seqs a×T … a×T+T−1 in send order, so a tx's account is its
// connection and its account sequence is load.SequenceAt(order, seq − a×T).
func accountsResults(p *plan.Testnet, rows []TxRow) *rundir.AccountsResults {
	if p == nil || p.Load.Workload != manifest.WorkloadAccounts || p.Load.TxsPerAccount < 1 {
		return nil
	}
	l := p.Load
	res := &rundir.AccountsResults{Order: l.Order, Accounts: l.Accounts, TxsPerAccount: l.TxsPerAccount}
	per := make([]rundir.AccountOutcome, l.Accounts)
	included := make([]map[uint64]bool, l.Accounts)
	for a := range per {
		per[a] = rundir.AccountOutcome{Account: a, HighestSequence: -1}
		included[a] = map[uint64]bool{}
	}
	oooSent, oooIncl := 0, 0
	for _, r := range rows {
		a := r.Conn
		if a < 0 || a >= l.Accounts {
			continue
		}
		pos := int(r.Seq) - a*l.TxsPerAccount
		if pos < 0 || pos >= l.TxsPerAccount {
			continue
		}
		seq := load.SequenceAt(l.Order, pos)
		o := &per[a]
		o.Node = r.Node
		o.Sent++
		ok := false
		switch r.State {
		case rundir.StateCommitted:
			if r.Code == 0 {
				ok = true
				o.Included++
				included[a][seq] = true
				o.HighestSequence = max(o.HighestSequence, int64(seq))
			} else {
				o.FailedInBlock++
			}
		case rundir.StateRejected:
			o.Rejected++
			if o.RejectCodes == nil {
				o.RejectCodes = map[string]int{}
			}
			o.RejectCodes[strconv.FormatInt(checkTxCode(r.Code, r.Log), 10)]++
		case rundir.StateLost:
			o.Lost++
		case rundir.StatePending:
			o.Pending++
		}
		if l.Order == "out-of-order" && pos < 3 {
			oooSent++
			if ok {
				oooIncl++
			}
		}
	}
	sent := 0
	for a := range per {
		o := &per[a]
		for s := int64(0); s < o.HighestSequence; s++ {
			if !included[a][uint64(s)] {
				o.Gaps++
			}
		}
		if o.Sent > 0 {
			o.InclusionRatio = float64(o.Included) / float64(o.Sent)
		}
		if o.Sent > 0 && o.Included == o.Sent {
			res.FullyIncluded++
		}
		sent += o.Sent
		res.Included += o.Included
	}
	if sent > 0 {
		res.InclusionRatio = float64(res.Included) / float64(sent)
	}
	if oooSent > 0 {
		res.OutOfOrderRatio = float64(oooIncl) / float64(oooSent)
	}
	res.PerAccount = per
	return res
}

// rpcInvalid is how CometBFT v1.0.1 words a CheckTx rejection it returns
// as a JSON-RPC error (-32603) rather than a result with the code.
var rpcInvalid = regexp.MustCompile(`is invalid: code=(\d+)`)

// checkTxCode is the app's code of a rejection: the recorded code, or the
// one inside a v1.0.1 JSON-RPC error's message.
func checkTxCode(code int64, log string) int64 {
	if code < 0 {
		if m := rpcInvalid.FindStringSubmatch(log); m != nil {
			if c, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				return c
			}
		}
	}
	return code
}

// accountsSummary is the per-account table of the run summary.
func accountsSummary(r *rundir.AccountsResults) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\naccounts: %d × %d txs, order %s: included %d (%.1f %%), %d of %d accounts fully included",
		r.Accounts, r.TxsPerAccount, r.Order, r.Included, 100*r.InclusionRatio, r.FullyIncluded, r.Accounts)
	if r.Order == "out-of-order" {
		fmt.Fprintf(&b, ", out-of-order txs included %.1f %%", 100*r.OutOfOrderRatio)
	}
	b.WriteString("\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "account\tnode\tsent\tincluded\trejected\tfailed\tlost\tpending\thighest seq\tgaps\tinclusion\treject codes\t")
	for _, o := range r.PerAccount {
		codes := make([]string, 0, len(o.RejectCodes))
		for c, n := range o.RejectCodes {
			codes = append(codes, fmt.Sprintf("%s:%d", c, n))
		}
		slices.Sort(codes)
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f %%\t%s\t\n", o.Account, o.Node, o.Sent, o.Included,
			o.Rejected, o.FailedInBlock, o.Lost, o.Pending, o.HighestSequence, o.Gaps, 100*o.InclusionRatio, strings.Join(codes, " "))
	}
	w.Flush()
	return b.String()
}
