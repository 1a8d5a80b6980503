package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/judge"
)

func TestQACodec(t *testing.T) {
	dir := t.TempDir()
	x := &QAIndex{SchemaVersion: QASchema, Kind: "qa", Name: "qa",
		Baseline: QABuild{Ref: "cometbft@v0.38.17"}, Candidate: QABuild{Ref: "cometbft@v1.0.1", Commit: "0123456789abcdef0123"},
		Config: []byte(`{"repeats":3}`), Profile: "quick",
		Plan:  QAPlan{Runs: 2, WallS: 60, BudgetS: 3600, DiskBytes: 1 << 30, FreeBytes: 2 << 30, Steps: []QAPlannedStep{{Name: "steady", Runs: 2}}},
		Steps: []QAStep{{Name: "steady", Kind: "compare", Build: "both", Dir: "steps/x", Status: StepDone}},
		Saturation: &QASaturation{Connections: 1, Baseline: judge.Interval{Lo: 800, Hi: 900}, Candidate: judge.Interval{Lo: 800},
			Margin: 0.2, Rate: 640, Verdict: judge.OutcomeInconclusive, Why: "w"},
		Results: []QAResult{{Scenario: "Steady test", Date: "2026-11-24", Version: "v", Result: judge.ResultPass, Why: "ok", Judged: true}},
		Overall: judge.ResultPass}
	if err := QARecord.Write(dir, x); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, QAFile))
	y, err := QARecord.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if y.Candidate.Version() != "cometbft@v1.0.1 (0123456789ab)" || y.Saturation.Baseline.Hi != 900 || y.Step("steady").Status != StepDone ||
		StepPath(dir, y.Step("steady")) != filepath.Join(dir, "steps/x") || y.Step("nope") != nil {
		t.Errorf("round trip lost fields: %+v", y)
	}
	if err := QARecord.Write(dir, y); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, QAFile))
	if !bytes.Equal(first, again) {
		t.Error("qa.json changed on a round trip")
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"schema_version": 99, "kind": "qa"}`, "newer than this benchnet reads"},
		{`{"schema_version": 1, "kind": "compare"}`, `kind "compare", want "qa"`},
		{`{`, "decode"},
	} {
		if err := os.WriteFile(filepath.Join(dir, QAFile), []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := QARecord.Read(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.doc, err, tc.want)
		}
	}
}
