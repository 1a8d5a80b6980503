package analyze

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// StepEvent is the detail of a perturb_step event: the resolved step and
// the testnet call made for it (kill, stop, start, wipe, pause, resume,
// disconnect, partition, heal).
type StepEvent struct {
	manifest.Step
	Do string `json:"do"`
}

// FaultInput is what ComputeFaults reads.
type FaultInput struct {
	Events   []rundir.Event
	Heights  []rundir.HeightSample
	Blocks   []rundir.Block
	BlockTxs []rundir.BlockTx
	Sent     []rundir.Sent
	Txs      []rundir.Tx
}

// LoadFaults reads a finished, analyzed run directory (txs.csv written).
func LoadFaults(dir string) (*FaultInput, error) {
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	in := &FaultInput{}
	if in.Events, err = d.ReadEvents(); err != nil {
		return nil, err
	}
	// A run without faults needs no more (txs.csv can be large).
	if !slices.ContainsFunc(in.Events, func(e rundir.Event) bool {
		return e.Kind == rundir.EventPerturbStep || e.Kind == rundir.EventRotateCycle || e.Kind == rundir.EventChainHalted
	}) {
		return in, nil
	}
	read := func(err error) error {
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	if in.Heights, _, err = rundir.HeightsCSV.ReadFile(rundir.HeightsCSV.Path(d)); read(err) != nil {
		return nil, err
	}
	if in.Blocks, _, err = rundir.BlocksCSV.ReadFile(rundir.BlocksCSV.Path(d)); read(err) != nil {
		return nil, err
	}
	if in.BlockTxs, _, err = rundir.BlockTxsCSV.ReadFile(rundir.BlockTxsCSV.Path(d)); read(err) != nil {
		return nil, err
	}
	if in.Sent, _, err = rundir.SentCSV.ReadFile(rundir.SentCSV.Path(d)); read(err) != nil {
		return nil, err
	}
	if in.Txs, _, err = rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d)); read(err) != nil {
		return nil, err
	}
	return in, nil
}

// FaultEffects computes faults.json for a run directory and writes it;
// nil results (and no file) when the run had no perturbations or rotation.
func FaultEffects(dir string) (*rundir.FaultResults, error) {
	in, err := LoadFaults(dir)
	if err != nil {
		return nil, err
	}
	res := ComputeFaults(in)
	if res == nil {
		return nil, nil
	}
	d := &rundir.Dir{Path: dir}
	if err := d.WriteFaults(res); err != nil {
		return nil, err
	}
	return res, nil
}

// ComputeFaults is a pure function of the run's records; nil when the run
// had no perturb_step, rotate_cycle or chain_halted event.
func ComputeFaults(in *FaultInput) *rundir.FaultResults {
	var loadStart, loadEnd int64
	type entry struct {
		ev    StepEvent
		start int64
		end   int64
	}
	var entries []*entry
	var steps []*entry // every perturb_step, for ends across entries
	byEntry := map[int]*entry{}
	res := &rundir.FaultResults{}
	any := false
	for _, e := range in.Events {
		t := e.Time.UnixNano()
		switch e.Kind {
		case rundir.EventLoadStart, rundir.EventPublishStart: // a gossip run's load is its publish window
			loadStart = t
		case rundir.EventLoadDone, rundir.EventPublishDone:
			loadEnd = t
		case rundir.EventChainHalted:
			res.Halted, any = e.Detail, true
		case rundir.EventRotateCycle:
			var rc rundir.RotateCycle
			if json.Unmarshal([]byte(e.Detail), &rc) == nil {
				res.Cycles = append(res.Cycles, rundir.Cycle{RotateCycle: rc})
			}
			any = true
		case rundir.EventPerturbStep:
			any = true
			var se StepEvent
			if json.Unmarshal([]byte(e.Detail), &se) != nil {
				continue
			}
			steps = append(steps, &entry{ev: se, start: t})
			if se.Action == manifest.ActResume || se.Action == manifest.ActHeal {
				continue // an undo of an earlier entry, not an outage of its own
			}
			en := byEntry[se.Entry]
			if en == nil {
				en = &entry{ev: se, start: t}
				byEntry[se.Entry] = en
				entries = append(entries, en)
			}
			// What ends the outage: the undo of a For, or the start of a
			// restart.
			if se.Undo || (se.Do == "start" && en.end == 0) {
				en.end = t
			}
		}
	}
	if !any {
		return nil
	}
	res.NoChain = len(in.Heights) == 0 && len(in.Blocks) == 0 && len(in.Txs) == 0
	if loadEnd == 0 && len(in.Blocks) > 0 {
		loadEnd = in.Blocks[len(in.Blocks)-1].TimeNs
	}
	blocks := slices.Clone(in.Blocks)
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].Height < blocks[j].Height })
	tips := tipsByPoll(in.Heights)

	// An entry without a For ends with a later entry's undo: a pause with
	// the next resume of one of its nodes, a cut with the next heal, a kill
	// with the next start.
	for _, en := range entries {
		if en.end != 0 {
			continue
		}
		want := map[string]string{manifest.ActKill: "start", manifest.ActPause: "resume",
			manifest.ActDisconnect: "heal", manifest.ActPartition: "heal"}[en.ev.Action]
		for _, s := range steps {
			if s.start > en.start && s.ev.Do == want && (want == "heal" || overlaps(s.ev.Nodes, en.ev.Nodes)) {
				en.end = s.start
				break
			}
		}
	}
	for _, en := range entries {
		p := rundir.Perturbation{Entry: en.ev.Entry, Action: en.ev.Action, Nodes: en.ev.Nodes, StartNs: en.start, EndNs: en.end,
			Undone: en.end != 0, Txs: map[string]int{}, FirstBlockS: -1}
		if p.EndNs == 0 {
			p.EndNs = max(loadEnd, p.StartNs)
		}
		// Block rate before: blocks in [loadStart, start).
		var before int
		for _, b := range blocks {
			if b.TimeNs >= loadStart && b.TimeNs < p.StartNs {
				before++
			}
		}
		if span := float64(p.StartNs-loadStart) / 1e9; span > 0 && loadStart > 0 {
			p.BlockRate = float64(before) / span
		}
		last := p.StartNs
		for _, b := range blocks {
			if b.TimeNs < p.StartNs {
				continue
			}
			if p.FirstBlockS < 0 {
				p.FirstBlockS = float64(b.TimeNs-p.StartNs) / 1e9
			}
			if b.TimeNs > p.EndNs {
				break
			}
			p.Blocks++
			p.LongestGapS = max(p.LongestGapS, float64(b.TimeNs-last)/1e9)
			last = b.TimeNs
		}
		if p.Blocks > 0 || p.FirstBlockS >= 0 {
			// The gap up to the outage's end, or to the first block after it.
			endGap := p.EndNs
			if p.FirstBlockS >= 0 && p.Blocks == 0 {
				endGap = p.StartNs + int64(p.FirstBlockS*1e9)
			}
			p.LongestGapS = max(p.LongestGapS, float64(endGap-last)/1e9)
		} else {
			p.LongestGapS = float64(p.EndNs-p.StartNs) / 1e9
		}
		expected := p.BlockRate * float64(p.EndNs-p.StartNs) / 1e9
		p.Missed = max(0, int(expected+0.5)-p.Blocks)
		// Only a chain's height poller says when a node is back at the tip
		// (a gossipsub testnet has none: no heights, no BackAtTip).
		if nodeAction(p.Action) && len(in.Heights) > 0 {
			p.BackAtTip = map[string]float64{}
			for _, n := range p.Nodes {
				p.BackAtTip[n] = backAtTip(in.Heights, tips, n, p.EndNs)
			}
		}
		for _, tx := range in.Txs {
			if tx.SentNs >= p.StartNs && tx.SentNs <= p.EndNs && slices.Contains(p.Nodes, tx.Node) {
				p.Txs[tx.State]++
			}
		}
		res.Perturbations = append(res.Perturbations, p)
	}

	// Duplicates: commits of a run tx after its first, by block time.
	runHash := map[string]bool{}
	for _, s := range in.Sent {
		runHash[s.Hash] = true
	}
	blockTime := map[int64]int64{}
	for _, b := range blocks {
		blockTime[b.Height] = b.TimeNs
	}
	seen := map[string]bool{}
	var dupTimes []int64
	btx := slices.Clone(in.BlockTxs)
	sort.SliceStable(btx, func(i, j int) bool {
		if btx[i].Height != btx[j].Height {
			return btx[i].Height < btx[j].Height
		}
		return btx[i].Index < btx[j].Index
	})
	for _, t := range btx {
		h := strings.ToUpper(t.Hash)
		if !runHash[h] {
			continue
		}
		if seen[h] {
			dupTimes = append(dupTimes, blockTime[t.Height])
		}
		seen[h] = true
	}
	for i := range res.Cycles {
		c := &res.Cycles[i]
		c.CatchUpS = -1
		if c.CaughtUpNs > 0 {
			c.CatchUpS = float64(c.CaughtUpNs-c.StartNs) / 1e9
			if c.CatchUpS > 0 {
				c.BlocksPerS = float64(c.Height) / c.CatchUpS
			}
		}
		stop := c.StopNs
		if stop == 0 {
			stop = loadEnd
		}
		for _, t := range dupTimes {
			if t >= c.StartNs && t <= stop {
				c.Duplicates++
			}
		}
	}
	sort.Slice(res.Cycles, func(i, j int) bool { return res.Cycles[i].Cycle < res.Cycles[j].Cycle })
	return res
}

// nodeAction says whether an action takes nodes out (so they come back).
func nodeAction(a string) bool {
	switch a {
	case manifest.ActKill, manifest.ActRestart, manifest.ActPause, manifest.ActWipeRestart, manifest.ActDisconnect, manifest.ActPartition:
		return true
	}
	return false
}

// tipsByPoll is the highest height of each poll (the poller stamps every
// answer of one poll with the same time).
func tipsByPoll(hs []rundir.HeightSample) map[int64]int64 {
	tips := map[int64]int64{}
	for _, h := range hs {
		tips[h.TimeNs] = max(tips[h.TimeNs], h.Height)
	}
	return tips
}

// backAtTip is the seconds from end until node's first answer at or after
// end within a block of that poll's tip and not catching up; -1 if none.
func backAtTip(hs []rundir.HeightSample, tips map[int64]int64, node string, end int64) float64 {
	best := int64(-1)
	for _, h := range hs {
		if h.Node != node || h.TimeNs < end || h.CatchingUp || h.Height < tips[h.TimeNs]-1 {
			continue
		}
		if best < 0 || h.TimeNs < best {
			best = h.TimeNs
		}
	}
	if best < 0 {
		return -1
	}
	return time.Duration(best - end).Seconds()
}

// FaultSummary is the text of faults.json for the terminal and report.md.
func FaultSummary(fr *rundir.FaultResults) string {
	var b strings.Builder
	if fr.Halted != "" {
		fmt.Fprintf(&b, "CHAIN HALTED: %s\n", fr.Halted)
	}
	for _, p := range fr.Perturbations {
		if fr.NoChain {
			fmt.Fprintf(&b, "perturb[%d] %s %s: outage %.1f s%s\n", p.Entry, p.Action, strings.Join(p.Nodes, ","),
				float64(p.EndNs-p.StartNs)/1e9, map[bool]string{false: " (not undone)", true: ""}[p.Undone])
			continue
		}
		fmt.Fprintf(&b, "perturb[%d] %s %s: outage %.1f s%s, %d blocks (%.2f/s before, %d missed), next block after %s, longest gap %.1f s",
			p.Entry, p.Action, strings.Join(p.Nodes, ","), float64(p.EndNs-p.StartNs)/1e9, map[bool]string{false: " (not undone)", true: ""}[p.Undone],
			p.Blocks, p.BlockRate, p.Missed, secs(p.FirstBlockS), p.LongestGapS)
		for _, n := range p.Nodes {
			if v, ok := p.BackAtTip[n]; ok {
				fmt.Fprintf(&b, ", %s back at tip %s after", n, secs(v))
			}
		}
		fmt.Fprintf(&b, "; txs to it meanwhile %s\n", states(p.Txs))
	}
	for _, c := range fr.Cycles {
		if c.CatchUpS < 0 {
			fmt.Fprintf(&b, "rotate cycle %d %s: not caught up (%s); %d duplicates meanwhile\n", c.Cycle, c.Node, c.Error, c.Duplicates)
			continue
		}
		fmt.Fprintf(&b, "rotate cycle %d %s: caught up to height %d in %.1f s (%.0f blocks/s); %d duplicates meanwhile\n",
			c.Cycle, c.Node, c.Height, c.CatchUpS, c.BlocksPerS, c.Duplicates)
	}
	return b.String()
}

func secs(v float64) string {
	if v < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1f s", v)
}

func states(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
