package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// JUnit XML, the subset CI systems read: one suite, a testcase per judged
// verdict; a regression is a failure, an inconclusive verdict skipped.
type (
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	JUnitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []JUnitCase `xml:"testcase"`
	}
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Failure   *JUnitMessage `xml:"failure,omitempty"`
		Skipped   *JUnitMessage `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	JUnitMessage struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// QAJUnit is the QA directory's verdicts as JUnit XML: per scenario, one
// testcase per judged metric (the steady test's, each with its change and
// interval), one for the saturation rate and one for catch-up.
func QAJUnit(dir string) ([]byte, error) {
	x, err := rundir.QARecord.Read(dir)
	if err != nil {
		return nil, err
	}
	var q rundir.QAConfig
	_ = json.Unmarshal(x.Config, &q)
	suite := JUnitSuite{Name: fmt.Sprintf("benchnet qa %s vs %s", x.Candidate.Ref, x.Baseline.Ref)}
	addCase := func(class, name string, o judge.Outcome, why string) {
		c := JUnitCase{Name: name, Classname: class, SystemOut: fmt.Sprintf("%s: %s", o, why)}
		switch o {
		case judge.OutcomeRegression:
			c.Failure = &JUnitMessage{Message: "regression", Text: why}
			suite.Failures++
		case judge.OutcomeInconclusive, "":
			c.Skipped = &JUnitMessage{Message: "inconclusive", Text: why}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
		suite.Tests++
	}
	if s := x.Saturation; s != nil {
		addCase("qa.saturation", "saturation_rate", s.Verdict, s.Why)
	} else {
		addCase("qa.saturation", "saturation_rate", judge.OutcomeInconclusive, "the saturation step did not finish")
	}
	for _, step := range []struct {
		name, class string
		judged      bool
	}{{"steady", "qa.steady", true}, {"latency-emulation", "qa.latency_emulation", q.JudgeLE}} {
		if !step.judged {
			continue
		}
		c := qaCompare(dir, x, step.name)
		if c == nil {
			if x.Step(step.name) != nil {
				addCase(step.class, "step", judge.OutcomeInconclusive, "the step did not finish")
			}
			continue
		}
		for _, vv := range c.Verdicts {
			for _, j := range vv.Judgements {
				if len(q.FailOn) > 0 && !contains(q.FailOn, j.Metric) {
					continue
				}
				addCase(step.class, j.Metric, j.Verdict, fmt.Sprintf("%s → %s (%+.2f %%): %s", CmpNum(j.Base), CmpNum(j.Variant), j.DeltaPct, j.Reason))
			}
		}
	}
	for _, r := range x.Results {
		if r.Scenario != "Rotating nodes" {
			continue
		}
		o := judge.OutcomeSame
		switch r.Result {
		case judge.ResultFail:
			o = judge.OutcomeRegression
		case judge.ResultInconclusive:
			o = judge.OutcomeInconclusive
		}
		addCase("qa.rotating", "catch_up", o, r.Why)
	}
	all := JUnitSuites{Name: "benchnet qa", Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped, Suites: []JUnitSuite{suite}}
	out, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
