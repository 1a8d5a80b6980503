package historyreport

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/benchnet/benchnet/internal/history"
)

// Selection narrows the store's series: each field set must match (a
// testbed hash or machine key by a prefix of it).
type Selection struct {
	Scenario, Testbed, Machine string
}

func (s Selection) empty() bool { return s == Selection{} }

func (s Selection) String() string {
	var parts []string
	for _, f := range []struct{ flag, v string }{{"--scenario", s.Scenario}, {"--testbed", s.Testbed}, {"--machine", s.Machine}} {
		if f.v != "" {
			parts = append(parts, f.flag+" "+f.v)
		}
	}
	return strings.Join(parts, " ")
}

// ChooseError is wrapped by Select's error when the selection leaves more
// than one series: the caller lists them.
type ChooseError struct {
	msg     string
	Choices []history.Series // the series the selection left
}

func (e *ChooseError) Error() string { return e.msg }

// Select returns the one series sel picks. More than one is an *ChooseError
// naming the flag that tells them apart and the choices; series of two
// machines are never merged, so a scenario recorded on several needs
// --machine.
func Select(all []history.Series, sel Selection) (history.Series, error) {
	var hit []history.Series
	for _, x := range all {
		if (sel.Scenario == "" || x.Scenario == sel.Scenario) && strings.HasPrefix(x.TestbedHash, sel.Testbed) && strings.HasPrefix(x.MachineKey, sel.Machine) {
			hit = append(hit, x)
		}
	}
	switch {
	case len(hit) == 1:
		return hit[0], nil
	case len(all) == 0:
		return history.Series{}, fmt.Errorf("the history holds no records yet")
	case len(hit) == 0:
		return history.Series{}, fmt.Errorf("no series matches %s (scenarios: %s)", sel, strings.Join(distinct(all, func(x history.Series) string { return x.Scenario }), ", "))
	}
	scenarios := distinct(hit, func(x history.Series) string { return x.Scenario })
	machines := distinct(hit, func(x history.Series) string { return x.MachineKey })
	testbeds := distinct(hit, func(x history.Series) string { return x.TestbedHash })
	switch {
	case len(scenarios) > 1:
		return history.Series{}, &ChooseError{Choices: hit, msg: fmt.Sprintf("the history holds %d series: choose one with --scenario NAME (%s), and --testbed or --machine where a scenario has several", len(hit), strings.Join(scenarios, ", "))}
	case len(machines) > 1:
		var cs []string
		for _, m := range machines {
			x := summed(hit, func(s history.Series) bool { return s.MachineKey == m })
			cs = append(cs, fmt.Sprintf("%s (%s × %d, %d records)", m, x.CPUModel, x.CPUs, x.Records))
		}
		return history.Series{}, &ChooseError{Choices: hit, msg: fmt.Sprintf("scenario %s was recorded on %d machines, whose results are never one series: choose one with --machine KEY: %s", scenarios[0], len(machines), strings.Join(cs, ", "))}
	default:
		var cs []string
		for _, t := range testbeds {
			x := summed(hit, func(s history.Series) bool { return s.TestbedHash == t })
			cs = append(cs, fmt.Sprintf("%s (%d records, %s to %s)", t, x.Records, x.First, x.Last))
		}
		return history.Series{}, &ChooseError{Choices: hit, msg: fmt.Sprintf("scenario %s was recorded on %d testbeds: choose one with --testbed HASH: %s", scenarios[0], len(testbeds), strings.Join(cs, ", "))}
	}
}

func distinct(xs []history.Series, f func(history.Series) string) []string {
	var out []string
	for _, x := range xs {
		if v := f(x); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// summed adds up the series keep selects (records, first and last).
func summed(xs []history.Series, keep func(history.Series) bool) history.Series {
	var out history.Series
	for _, x := range xs {
		if !keep(x) {
			continue
		}
		if out.Records == 0 {
			out = x
			continue
		}
		out.Records += x.Records
		out.First, out.Last = min(out.First, x.First), max(out.Last, x.Last)
	}
	return out
}

// WriteSeries lists series, one row each.
func WriteSeries(w io.Writer, series []history.Series) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTESTBED\tMACHINE\tCPU\tBUILDS\tRECORDS\tFIRST\tLAST")
	for _, x := range series {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s × %d\t%d\t%d\t%s\t%s\n", x.Scenario, x.TestbedHash, x.MachineKey, orDash(x.CPUModel), x.CPUs,
			x.Builds, x.Records, orDash(x.First), orDash(x.Last))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
