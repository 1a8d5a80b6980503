package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
)

// RunKind is a run directory's node kind, the one way every command learns
// it: plan.json's "kind"; a plan without one (written before kinds were
// recorded) is a CometBFT run unless the directory has published.csv (a
// gossip run).
func RunKind(dir string) (string, error) {
	var p struct {
		Kind string `json:"kind"`
	}
	data, err := os.ReadFile(filepath.Join(dir, Plan))
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &p); err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Join(dir, Plan), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if p.Kind != "" {
		return p.Kind, nil
	}
	if _, err := os.Stat(filepath.Join(dir, PublishedCSV.Name)); err == nil {
		return manifest.KindGossipsub, nil
	}
	return judge.DefaultKind, nil // a run from before plan.json recorded its kind
}
