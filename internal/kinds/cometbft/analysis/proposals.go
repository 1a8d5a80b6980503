package analysis

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// ProposalTimestampDifference is CometBFT v1's histogram (without the
// namespace) of a proposal's receive time minus its timestamp, labelled
// is_timely: PBTS's own view of the proposals (v0.38 and older lack it).
const ProposalTimestampDifference = "consensus_proposal_timestamp_difference"

// isProposalSeries keeps the histogram's rows when reading samples.
func isProposalSeries(metric string) bool {
	m, ok := strings.CutPrefix(metric, ProposalTimestampDifference)
	return ok && (m == "_bucket" || m == "_sum" || m == "_count")
}

// ProposalTimingOf sums every node's histogram increase over [from, to]
// (the load's window). Nil when no node exported the histogram or none
// observed a proposal in the window.
func ProposalTimingOf(samples []rundir.Sample, ns func(string) string, from, to int64) *rundir.ProposalTiming {
	type key struct{ node, metric, labels string }
	series := map[key][]*rundir.Sample{}
	for i := range samples {
		s := &samples[i]
		m, ok := strings.CutPrefix(s.Metric, ns(s.Node)+"_")
		if !ok || !isProposalSeries(m) {
			continue
		}
		k := key{s.Node, m, s.Labels}
		series[k] = append(series[k], s)
	}
	if len(series) == 0 {
		return nil
	}
	nodes := map[string]bool{}
	buckets := map[float64]float64{} // le -> increase, over nodes and verdicts
	var count, sum, untimely float64
	for k, rows := range series {
		d := increase(rows, from, to)
		labels, err := promtext.ParseLabels(k.labels)
		if err != nil {
			continue
		}
		switch strings.TrimPrefix(k.metric, ProposalTimestampDifference) {
		case "_count":
			count += d
			if labels["is_timely"] == "false" {
				untimely += d
			}
			if d > 0 {
				nodes[k.node] = true
			}
		case "_sum":
			sum += d
		case "_bucket":
			le, err := strconv.ParseFloat(labels["le"], 64)
			if err == nil {
				buckets[le] += d
			}
		}
	}
	if count <= 0 {
		return nil
	}
	return &rundir.ProposalTiming{
		Nodes:     len(nodes),
		Proposals: int(math.Round(count)),
		Untimely:  int(math.Round(untimely)),
		MeanMs:    analyze.Round3(1000 * sum / count),
		P50Ms:     analyze.Round3(1000 * bucketQuantile(0.5, buckets)),
		P99Ms:     analyze.Round3(1000 * bucketQuantile(0.99, buckets)),
	}
}

// increase is a counter's increase over [from, to]: from its last sample at
// or before from (its first sample when none is), counting a drop (a
// restarted node) as a reset to zero.
func increase(rows []*rundir.Sample, from, to int64) float64 {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].TimeNs < rows[j].TimeNs })
	var d, last float64
	started := false
	for _, s := range rows {
		if s.TimeNs > to {
			break
		}
		switch {
		case s.TimeNs <= from || !started:
			// the baseline: the last value at or before from
		case s.Value >= last:
			d += s.Value - last
		default:
			d += s.Value
		}
		started, last = true, s.Value
	}
	return d
}

// bucketQuantile is Prometheus's histogram_quantile over cumulative bucket
// counts keyed by upper bound: linear inside the bucket that holds the
// rank, the first bucket's lower bound taken as min(0, its upper bound),
// and the highest finite bound when the rank falls in +Inf.
func bucketQuantile(q float64, buckets map[float64]float64) float64 {
	les := make([]float64, 0, len(buckets))
	for le := range buckets {
		les = append(les, le)
	}
	sort.Float64s(les)
	if len(les) == 0 {
		return math.NaN()
	}
	total := buckets[les[len(les)-1]]
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	lower, below := math.Min(0, les[0]), 0.0
	for i, le := range les {
		c := buckets[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				if i == 0 {
					return math.NaN()
				}
				return les[i-1]
			}
			if i == 0 && le <= 0 {
				return le
			}
			if c == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(c-below)
		}
		lower, below = le, c
	}
	return les[len(les)-1]
}
