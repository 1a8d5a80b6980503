package manifest

import "fmt"

// Where a CometBFT node's mempool lives (Group.Mempool).
const (
	// MempoolFlood is CometBFT's own mempool (the clist, flooded to
	// peers): the default, written "" or "flood".
	MempoolFlood = "flood"
	// MempoolApp is cometbft v0.40's app-side mempool ([mempool] type =
	// "app"): the ABCI app keeps the txs (CheckTx and InsertTx add them,
	// ReapTxs hands them to CometBFT to broadcast, PrepareProposal builds
	// the block from them); CometBFT only gossips.
	MempoolApp = "app"
)

// MempoolOf is a group's mempool with the default filled in.
func MempoolOf(g *Group) string {
	if g.Mempool == "" {
		return MempoolFlood
	}
	return g.Mempool
}

// validateMempool checks every group's mempool: a known one, and the app
// mempool only where it can run: a release that has it (cometbft v0.40)
// and an app that implements InsertTx and ReapTxs (the accounts app).
func (m *Manifest) validateMempool(add func(field, format string, args ...any)) {
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name + ".mempool"
		switch MempoolOf(g) {
		case MempoolFlood:
			continue
		case MempoolApp:
		default:
			add(f, "%q: want %q (the default) or %q", g.Mempool, MempoolFlood, MempoolApp)
			continue
		}
		if g.Role == "seed" {
			continue // a seed runs no mempool worth the name
		}
		if flavour, v, ok := ParseRelease(g.Release); ok && !inV040Line(flavour, v) {
			add(f, "%s has no app-side mempool: [mempool] type = \"app\" came with cometbft v0.40.0; use release = \"cometbft@v0.40.0\" or later in the v0.40 line", g.Release)
		}
		if g.App != AppAccounts {
			add(f, "%s", fmt.Sprintf("%q keeps the txs in the app, which must implement InsertTx and ReapTxs: only app = %q does (docs/accounts.md)", MempoolApp, AppAccounts))
		}
		if _, ok := g.Config["mempool.type"]; ok {
			add(f, "set both mempool and config \"mempool.type\": keep one (mempool = %q writes mempool.type)", MempoolApp)
		}
	}
}
