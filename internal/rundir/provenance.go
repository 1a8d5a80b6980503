package rundir

import "strings"

// ProvenanceDir holds a run's provenance/<release>-<program>.txt, one per
// binary (internal/testnet writes them): a header of "key: value" lines
// saying which bytes ran (references, kind, module and version or a tree's
// revision and hashes, the binary's sha256), then what the release cache
// recorded with the binary.
const ProvenanceDir = "provenance"

// ProvenanceHeader reads a provenance file's header, up to the first blank
// or comment line: every "reference" value in refs (a release may be
// given by several), the first value of each other key in kv.
func ProvenanceHeader(text string) (refs []string, kv map[string]string) {
	kv = map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			break
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if k == "reference" {
			refs = append(refs, v)
		} else if _, seen := kv[k]; !seen {
			kv[k] = v
		}
	}
	return refs, kv
}
