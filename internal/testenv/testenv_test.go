package testenv

import (
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
