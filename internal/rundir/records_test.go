package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClaimUnique: concurrent claims of one name get distinct directories,
// each with its sub-directories.
func TestClaimUnique(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "out")
	const n = 20
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = ClaimStamped(parent, "x-sweep", time.Unix(0, 0), "cells", "testnets")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, p := range paths {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[p] {
			t.Fatalf("%s claimed twice", p)
		}
		seen[p] = true
		if !filepath.IsAbs(p) || !strings.HasPrefix(filepath.Base(p), "19700101-000000-x-sweep") {
			t.Errorf("claimed %s", p)
		}
		if st, err := os.Stat(filepath.Join(p, "testnets")); err != nil || !st.IsDir() {
			t.Errorf("%s lacks testnets/: %v", p, err)
		}
	}
}

func TestRecordSchema(t *testing.T) {
	type rec struct {
		SchemaVersion int    `json:"schema_version"`
		X             string `json:"x"`
	}
	for _, tc := range []struct {
		name    string
		exact   bool
		version int
		wantErr string
	}{
		{"same", true, 2, ""},
		{"older-exact", true, 1, "schema_version 1, this benchnet reads 2"},
		{"older", false, 1, ""},
		{"newer", false, 3, "schema_version 3 is newer than this benchnet reads (2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := Record[rec]{Name: "r.json", Schema: 2, Exact: tc.exact}
			if err := r.Write(dir, &rec{SchemaVersion: tc.version, X: "v"}); err != nil {
				t.Fatal(err)
			}
			got, err := r.Read(dir)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && got.X != "v":
				t.Fatalf("read back %+v", got)
			}
		})
	}
	if (Record[rec]{Name: "none.json"}).Exists(t.TempDir()) {
		t.Error("Exists on an empty directory")
	}
}
