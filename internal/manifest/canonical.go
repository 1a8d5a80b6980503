package manifest

import (
	"encoding/json"
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// Canonical is a manifest's testbed as one canonical document: the TOML
// decoded and re-encoded as JSON with sorted keys, without what names the
// experiment around the testbed rather than the testbed itself (name,
// [load], [variants], [sweep], [qa], [thresholds]) and without every node
// group's release (the build). Comments, key order and layout do not
// change it, so the history's testbed key and the calibration record's are
// one identity of a testbed (they add their own load or QA profile).
func Canonical(manifestTOML []byte) ([]byte, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(manifestTOML, &doc); err != nil {
		return nil, fmt.Errorf("canonical testbed: %w", err)
	}
	for _, k := range []string{"name", "load", "variants", "sweep", "qa", "thresholds"} {
		delete(doc, k)
	}
	if groups, ok := doc["node"].(map[string]any); ok {
		for _, g := range groups {
			if g, ok := g.(map[string]any); ok {
				delete(g, "release")
			}
		}
	}
	return json.Marshal(doc)
}
