package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The stream of a real `go test -json` over testdata/suite (one passing,
// one failing, one skipped test, and a package whose test hangs past its
// timeout): plain go test's lines come through, the passing test's log
// does not, and the slowest tests are listed.
func TestSummaryOfARealStream(t *testing.T) {
	dir, err := filepath.Abs("testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "-p", "1", "-timeout", "3s", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	stream, err := cmd.Output()
	if err == nil {
		t.Fatal("go test over testdata/suite passed: it holds a failing test")
	}
	var out bytes.Buffer
	if err := run(bytes.NewReader(stream), &out, 20); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Logf("summary:\n%s", got)
	for _, want := range []string{
		"--- FAIL: TestFails", "fails says why", // a failing test's output
		"ok  \tsuite/passes\t", "FAIL\tsuite/fails\t", // package lines as plain go test writes them
		"panic: test timed out after 3s", "hangs said this before it hung", // a test cut by the timeout
		"testsum: 4 tests took ", " suite/hangs TestHangs (no end: the package ended it)", " suite/passes TestPasses (pass)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	for _, not := range []string{"passes logs this", "=== RUN", "--- PASS", "skipped says why"} {
		if strings.Contains(got, not) {
			t.Errorf("summary has %q, which plain go test prints only with -v", not)
		}
	}
	// The hung test comes first: it took the whole timeout.
	if i, j := strings.Index(got, "TestHangs (no end"), strings.Index(got, "TestPasses (pass)"); i < 0 || j < 0 || i > j {
		t.Errorf("slowest first: TestHangs at %d, TestPasses at %d", i, j)
	}
}

// A line that is not an event (go test's own error before any package
// runs) is passed on unchanged.
func TestNonEventLinesPassThrough(t *testing.T) {
	var out bytes.Buffer
	in := "go: updates to go.mod needed\n{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"FAIL\\tp [setup failed]\\n\"}\n"
	if err := run(strings.NewReader(in), &out, 20); err != nil {
		t.Fatal(err)
	}
	if want := "go: updates to go.mod needed\nFAIL\tp [setup failed]\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
