// Command testsum reads `go test -json` on stdin and writes what plain
// `go test` would (the ok/FAIL line of each package, the output of failing
// tests only), then the slowest tests, so a CI log says where its minutes
// went. scripts/test.sh pipes the suite through it; the exit status stays
// go test's (pipefail).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of test2json (cmd/test2json's TestEvent).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output lines name the package here
	Test       string
	Elapsed    float64
	Output     string
}

// timing is one finished top-level test.
type timing struct {
	pkg, test, action string
	elapsed           float64
}

// summary folds the event stream.
type summary struct {
	out      io.Writer
	buffered map[string][]string  // package + "\x00" + test → its output so far
	started  map[string]time.Time // package + "\x00" + test → when it ran, until it ends
	tests    []timing
	packages []timing
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, buffered: map[string][]string{}, started: map[string]time.Time{}}
}

func (s *summary) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Action == "run":
		s.started[key] = e.Time
	case e.Action == "output":
		// The package's own lines ("ok  pkg 1.2s", "FAIL pkg") wait for
		// its end, so a test it cut off is told before them. Plain go
		// test prints "PASS" and the === lines only with -v.
		if t := strings.TrimSpace(e.Output); (e.Test == "" && t == "PASS") || strings.HasPrefix(t, "=== ") {
			return
		}
		s.buffered[key] = append(s.buffered[key], e.Output)
	case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		if e.Action == "fail" {
			fmt.Fprint(s.out, strings.Join(s.buffered[key], ""))
		}
		delete(s.buffered, key)
		delete(s.started, key)
		if !strings.Contains(e.Test, "/") {
			s.tests = append(s.tests, timing{e.Package, e.Test, e.Action, e.Elapsed})
		}
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail"):
		// A test the package ended without an end of its own (a timeout's
		// panic, a crash): everything it said, and its time so far.
		own := e.Package + "\x00"
		for k, lines := range s.buffered {
			if strings.HasPrefix(k, own) && k != own {
				fmt.Fprint(s.out, strings.Join(lines, ""))
				delete(s.buffered, k)
			}
		}
		fmt.Fprint(s.out, strings.Join(s.buffered[own], ""))
		delete(s.buffered, own)
		for k, at := range s.started {
			if pkg, test, _ := strings.Cut(k, "\x00"); pkg == e.Package {
				if !strings.Contains(test, "/") {
					s.tests = append(s.tests, timing{pkg, test, "no end: the package ended it", e.Time.Sub(at).Seconds()})
				}
				delete(s.started, k)
			}
		}
		s.packages = append(s.packages, timing{e.Package, "", e.Action, e.Elapsed})
	}
}

// flush writes what a stream that ended early (go test killed, a setup
// failure) left unsaid, so nothing is lost.
func (s *summary) flush() {
	keys := make([]string, 0, len(s.buffered))
	for k := range s.buffered {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprint(s.out, strings.Join(s.buffered[k], ""))
	}
	clear(s.buffered)
}

// report writes the n slowest top-level tests and the packages by time.
func (s *summary) report(n int) {
	if len(s.tests) == 0 {
		return
	}
	tests := append([]timing(nil), s.tests...)
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	total := 0.0
	for _, t := range s.tests {
		total += t.elapsed
	}
	fmt.Fprintf(s.out, "\ntestsum: %d tests took %s; the %d slowest:\n", len(tests), dur(total), min(n, len(tests)))
	for _, t := range tests[:min(n, len(tests))] {
		fmt.Fprintf(s.out, "testsum: %8s %5.1f %%  %s %s (%s)\n", dur(t.elapsed), 100*t.elapsed/total, t.pkg, t.test, t.action)
	}
	pkgs := append([]timing(nil), s.packages...)
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].elapsed > pkgs[j].elapsed })
	for _, p := range pkgs {
		if p.elapsed >= 60 {
			fmt.Fprintf(s.out, "testsum: package %8s  %s (%s)\n", dur(p.elapsed), p.pkg, p.action)
		}
	}
}

func dur(seconds float64) string {
	return (time.Duration(seconds * float64(time.Second))).Round(100 * time.Millisecond).String()
}

// run folds r into w; a line that is not an event (go test's own errors
// before any package runs) is passed on as it is.
func run(r io.Reader, w io.Writer, n int) error {
	s := newSummary(w)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		s.add(e)
	}
	s.flush()
	s.report(n)
	return sc.Err()
}

func main() {
	if err := run(os.Stdin, os.Stdout, 30); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
}
