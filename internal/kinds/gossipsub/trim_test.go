package gossipsub

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrimCutRow: a trace a SIGKILL cut mid-row loses that row and nothing
// else; a whole trace and a missing file are left alone.
func TestTrimCutRow(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, in, want string }{
		{"whole", "h\na\nb\n", "h\na\nb\n"},
		{"cut", "h\na\nb,1", "h\na\n"},
		{"cut header", "time_n", ""},
		{"empty", "", ""},
	} {
		path := filepath.Join(dir, tc.name+".csv")
		if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := trimCutRow(path); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if err := trimCutRow(filepath.Join(dir, "missing.csv")); err != nil {
		t.Errorf("missing file: %v", err)
	}
}
