package load

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Validity limits: beyond them the generator, not the network, limited the
// load, and the run says so instead of reporting a saturation that was
// ours. They are defined here once, with the figures they apply to
// (ConnMeter), for the generator's own summary (load.json) and for analyze,
// which recomputes them from sent.csv.
const (
	MaxLagP99   = 100 * time.Millisecond // p99 of (actual − intended send time) per connection
	MinAchieved = 0.95                   // achieved / target rate per connection
)

// ConnMeter accumulates one connection's send records, in any order, into
// the figures the validity limits apply to.
//
// Rates are taken over the connection's own schedule: the target rate is
// the records over the span from the first intended send (t0) to one
// schedule interval past the last intended one, the achieved rate the same
// records over the span to one interval past the last actual send. For a
// constant rate r the target is exactly r. The interval is the gap between
// the last two intended sends, so the figures need at least two records.
type ConnMeter struct {
	attempted, errs, rejected int
	lags                      []int64 // actual − intended, ns
	first, last, prev         int64   // smallest, largest and second largest intended time
	lastSent                  int64
}

// Add counts one record.
func (m *ConnMeter) Add(s *rundir.Sent) {
	if m.attempted == 0 {
		m.first, m.last, m.prev = s.Intended, s.Intended, math.MinInt64
	} else {
		m.first = min(m.first, s.Intended)
		switch {
		case s.Intended >= m.last:
			m.prev, m.last = m.last, s.Intended
		case s.Intended > m.prev:
			m.prev = s.Intended
		}
	}
	m.attempted++
	m.lags = append(m.lags, s.SentAt-s.Intended)
	m.lastSent = max(m.lastSent, s.SentAt)
	switch s.Result {
	case rundir.ResultSendError:
		m.errs++
	case rundir.ResultRejected:
		m.rejected++
	}
}

// Attempted is the number of records added.
func (m *ConnMeter) Attempted() int { return m.attempted }

// Summary returns the connection's figures and, when it broke a limit, why
// the load is not valid ("" when it is). expected is the number of txs the
// connection was scheduled to send (0: unknown, as for analyze).
func (m *ConnMeter) Summary(node string, conn, expected int) (rundir.LoadConn, string) {
	cs := rundir.LoadConn{Node: node, Conn: conn, Attempted: m.attempted, Errors: m.errs, Rejected: m.rejected}
	if m.attempted >= 2 && m.prev != math.MinInt64 {
		interval := m.last - m.prev
		if span := m.last - m.first + interval; span > 0 {
			cs.TargetRate = float64(m.attempted) / (float64(span) / 1e9)
		}
		if span := m.lastSent - m.first + interval; span > 0 {
			cs.Achieved = float64(m.attempted) / (float64(span) / 1e9)
		}
	}
	slices.Sort(m.lags)
	cs.LagP50Ms = ms(quantile(m.lags, 0.50))
	cs.LagP99Ms = ms(quantile(m.lags, 0.99))
	if len(m.lags) > 0 {
		cs.LagMaxMs = ms(m.lags[len(m.lags)-1])
	}
	var why string
	switch {
	case expected > 0 && m.attempted < expected:
		why = fmt.Sprintf("connection %d (%s): attempted %d of %d txs", conn, node, m.attempted, expected)
	case cs.LagP99Ms > ms(int64(MaxLagP99)):
		why = fmt.Sprintf("connection %d (%s): send lag p99 %.1f ms > %v: the generator fell behind", conn, node, cs.LagP99Ms, MaxLagP99)
	case cs.TargetRate > 0 && cs.Achieved < MinAchieved*cs.TargetRate:
		why = fmt.Sprintf("connection %d (%s): achieved %.1f tx/s < %.0f%% of target %.1f tx/s", conn, node, cs.Achieved, 100*MinAchieved, cs.TargetRate)
	case m.attempted > 0 && m.errs == m.attempted:
		why = fmt.Sprintf("connection %d (%s): all %d txs failed to send", conn, node, m.attempted)
	}
	return cs, why
}

// BlockedNote is what a connection's reason adds when the sender waited
// blockedS seconds on the node's full queue: the node's backpressure, not
// a starved generator, made (some of) its lag.
func BlockedNote(blockedS float64) string {
	return fmt.Sprintf(" (the node left %d MiB unread: the sender waited %.1f s on it)", maxQueued>>20, blockedS)
}

// quantile of sorted values, nearest rank.
func quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
