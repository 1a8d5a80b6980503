package local

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestStateWritersDoNotCollide: two writers of one state file, as a harness
// and `benchnet down` in another process are, save at the same time. Each
// save must succeed (a shared temporary name made one rename fail with "no
// such file or directory"), the file must stay valid JSON, and no temporary
// file may be left.
func TestStateWritersDoNotCollide(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	a, b := newStateFile(path, "abc123"), newStateFile(path, "abc123")
	var wg sync.WaitGroup
	errs := make(chan error, 2000)
	for _, s := range []*stateFile{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if err := s.Add(resource{Kind: kindNetns, Name: "n", PID: i}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent save: %v", err)
	}
	if _, err := readStateFile(path); err != nil {
		t.Errorf("state file after concurrent saves: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files beside the state file: %v", names)
	}
}
