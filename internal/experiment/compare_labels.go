package experiment

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/manifest"
)

// VariantLabels says what each of m's [variants] changes, as the Initia
// table's Config column does ("clist/iavl"): the variant's overrides as
// dotted key=value pairs, sorted, "node." left out
// ("validator.app=kvstore-socket, validator.config.log_level=error"); a
// variant that changes nothing is "(the manifest)".
func VariantLabels(m *manifest.Manifest) map[string]string {
	names := m.VariantNames()
	if len(names) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, name := range names {
		over, _ := m.Variants[name].(map[string]any)
		var pairs []string
		flatten("", over, &pairs)
		sort.Strings(pairs)
		if len(pairs) == 0 {
			out[name] = "(the manifest)"
			continue
		}
		out[name] = strings.Join(pairs, ", ")
	}
	return out
}

func flatten(prefix string, v map[string]any, out *[]string) {
	for k, val := range v {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := val.(map[string]any); ok {
			flatten(key, sub, out)
			continue
		}
		*out = append(*out, fmt.Sprintf("%s=%v", strings.TrimPrefix(key, "node."), val))
	}
}
