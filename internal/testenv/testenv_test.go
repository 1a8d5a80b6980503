package testenv

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// fakeTB records what a helper did to a test instead of stopping it.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skip(args ...any)      { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatal(args ...any)     { f.failed = true }
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Setenv(k, v string)    { os.Setenv(k, v) }
func (f *fakeTB) Cleanup(func())        {}
func (f *fakeTB) Name() string          { return "fake" }
func (f *fakeTB) TempDir() string       { return os.TempDir() }
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }
func (f *fakeTB) Error(args ...any)     { f.failed = true }
func (f *fakeTB) Log(args ...any)       {}
func (f *fakeTB) Failed() bool          { return f.failed }
func (f *fakeTB) Skipped() bool         { return f.skipped }
func (f *fakeTB) FailNow()              { f.failed = true }
func (f *fakeTB) SkipNow()              { f.skipped = true }

func TestSkipFailsUnderCI(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		skip, fail bool
	}{
		{"", true, false},
		{"false", true, false},
		{"true", false, true},
		{"1", false, true},
	} {
		t.Setenv("CI", tt.ci)
		f := &fakeTB{}
		Skip(f, "needs %s", "x")
		if f.skipped != tt.skip || f.failed != tt.fail {
			t.Errorf("CI=%q: skipped=%v failed=%v, want skipped=%v failed=%v", tt.ci, f.skipped, f.failed, tt.skip, tt.fail)
		}
	}
}

func TestSharedFileFromAnyPackage(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("ModuleRoot = %s has no go.mod", root)
	}
	t.Setenv("CI", "true")
	f := &fakeTB{}
	SharedFile(f, "no/such/file.csv")
	if !f.failed {
		t.Error("a missing shared file under CI did not fail the test")
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	f := &fakeTB{}
	Golden(f, path, []byte("a\n"))
	if !f.failed {
		t.Error("a missing golden file did not fail the test")
	}
	*update = true
	Golden(t, path, []byte("a\nb\n"))
	*update = false
	for _, tc := range []struct {
		got  string
		fail bool
	}{{"a\nb\n", false}, {"a\nc\n", true}} {
		f := &fakeTB{}
		Golden(f, path, []byte(tc.got))
		if f.failed != tc.fail {
			t.Errorf("Golden(%q) against %q: failed=%v, want %v", tc.got, "a\nb\n", f.failed, tc.fail)
		}
	}
	if d := LineDiff([]byte("a\nb\n"), []byte("a\nc\n")); d != "line 2:\n  want b\n  got  c\n" {
		t.Errorf("LineDiff = %q", d)
	}
}

// TestIntegrationSwitch: integration tests run only with the switch on (or
// under CI, where a skip is a failure), never with -short.
func TestIntegrationSwitch(t *testing.T) {
	short := flag.Lookup("test.short").Value.String()
	t.Cleanup(func() { flag.Set("test.short", short) })
	flag.Set("test.short", "false")
	for _, tt := range []struct {
		env, ci    string
		skip, fail bool
	}{
		{"", "", true, false},
		{"0", "", true, false},
		{"1", "", false, false},
		{"true", "", false, false},
		{"", "true", false, false}, // CI turns the switch on
	} {
		t.Setenv(IntegrationEnv, tt.env)
		t.Setenv("CI", tt.ci)
		f := &fakeTB{}
		Integration(f)
		if f.skipped != tt.skip || f.failed != tt.fail {
			t.Errorf("%s=%q CI=%q: skipped=%v failed=%v, want skipped=%v failed=%v", IntegrationEnv, tt.env, tt.ci, f.skipped, f.failed, tt.skip, tt.fail)
		}
		f = &fakeTB{}
		NeedRoot(f)
		if tt.skip && !f.skipped {
			t.Errorf("%s=%q CI=%q: NeedRoot did not skip with the switch off", IntegrationEnv, tt.env, tt.ci)
		}
	}
	// -short skips even with the switch on, and fails under CI.
	flag.Set("test.short", "true")
	for _, ci := range []string{"", "true"} {
		t.Setenv(IntegrationEnv, "1")
		t.Setenv("CI", ci)
		f := &fakeTB{}
		Integration(f)
		if f.skipped == (ci == "true") || f.failed != (ci == "true") {
			t.Errorf("-short, CI=%q: skipped=%v failed=%v", ci, f.skipped, f.failed)
		}
	}
}

// Ports handed out are distinct, outside the ephemeral range and free.
func TestFreePort(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if p < portLo || p >= portHi || seen[p] {
			t.Fatalf("port %d: outside [%d, %d) or given twice", p, portLo, portHi)
		}
		seen[p] = true
		l, err := net.Listen("tcp4", fmt.Sprintf("0.0.0.0:%d", p))
		if err != nil {
			t.Fatalf("port %d not free: %v", p, err)
		}
		l.Close()
	}
}
