package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Variants: a [variants.<name>] table overrides any part of the manifest for
// that variant, with the manifest's own keys (a group's release, its config
// keys, its app, the load, [genesis] keys):
//
//	[variants.v038]
//	node.validator.release = "cometbft@v0.38.17"
//	[variants.v1]
//	node.validator.release = "cometbft@v1.0.1"
//	[variants.v1.node.validator.config]
//	"consensus.timeout_commit" = "3s"
//
// The first variant in the file is the baseline unless [variants] says
// base = "<name>". A variant's manifest is the whole manifest with its table
// merged in (tables key by key, other values replaced); it is validated with
// the manifest, each problem at the line that causes it.

var variantRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,23}$`)

// variantFixed are top-level keys a variant may not change: the name labels
// the comparison's run directories, and variants do not nest.
var variantFixed = map[string]string{
	"name":     "the variants of one manifest share its name (run directories carry the variant's)",
	"variants": "variants do not nest",
}

// HasVariants reports whether the manifest declares [variants].
func (m *Manifest) HasVariants() bool { return len(m.VariantNames()) > 0 }

// VariantNames returns the variants, the baseline first, then the others
// in the order the file declares them.
func (m *Manifest) VariantNames() []string {
	var names []string
	for k, v := range m.Variants {
		if _, ok := v.(map[string]any); ok {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		li, lj := m.pos.line("variants."+names[i]), m.pos.line("variants."+names[j])
		if li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	base := m.BaseVariant()
	for i, n := range names {
		if n == base && i > 0 {
			names = append(append([]string{n}, names[:i]...), names[i+1:]...)
			break
		}
	}
	return names
}

// BaseVariant is the baseline's name: [variants] base, or the first.
func (m *Manifest) BaseVariant() string {
	if b, ok := m.Variants["base"].(string); ok {
		return b
	}
	first, line := "", 0
	for k, v := range m.Variants {
		if _, ok := v.(map[string]any); !ok {
			continue
		}
		if l := m.pos.line("variants." + k); first == "" || l < line || (l == line && k < first) {
			first, line = k, l
		}
	}
	return first
}

// Variant returns the manifest of variant name: defaulted and validated,
// with no [variants] of its own. Raw is a TOML rendering of it (with the
// groups in the manifest's order), so its run directory records what ran.
func (m *Manifest) Variant(name string) (*Manifest, error) {
	v, errs := m.variant(name)
	if len(errs) > 0 {
		return nil, errs
	}
	return v, nil
}

func (m *Manifest) variant(name string) (*Manifest, Errors) {
	field := "variants." + name
	over, ok := m.Variants[name].(map[string]any)
	if !ok {
		return nil, Errors{m.Errorf("variants", "no variant %q (have %s)", name, strings.Join(m.VariantNames(), ", "))}
	}
	var errs Errors
	for k := range over {
		if why, fixed := variantFixed[k]; fixed {
			errs = append(errs, m.Errorf(field+"."+k, "a variant cannot set %s: %s", k, why))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	doc, err := m.document()
	if err != nil {
		return nil, Errors{m.Errorf(field, "%v", err)}
	}
	merge(doc, over)
	data, err := toml.Marshal(doc)
	if err != nil {
		return nil, Errors{m.Errorf(field, "%v", err)}
	}

	// Lines: a key the variant sets is at the variant's line, the rest at
	// the manifest's.
	pos := positions{}
	for k, l := range m.pos {
		if k != "variants" && !strings.HasPrefix(k, "variants.") {
			pos[k] = l
		}
	}
	overridden := map[string]bool{}
	for k, l := range m.pos {
		if rest, ok := strings.CutPrefix(k, field+"."); ok {
			pos[rest] = l
			overridden[rest] = true
		}
	}
	v := &Manifest{File: m.File, Dir: m.Dir, Releases: m.Releases, ReleaseInfo: m.ReleaseInfo, pos: pos}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = withoutClaimed(dec.Decode(v))
	if s := v.Schema(); err == nil && s.NewTables != nil {
		v.tables, err = decodeOwnTables(s, data)
	}
	if err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			for _, e := range strict.Errors {
				k := joinKey(e.Key())
				errs = append(errs, m.Errorf(field+"."+k, "unknown key"))
			}
			return nil, errs
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			return nil, Errors{m.Errorf(field+"."+joinKey(de.Key()), "%s", strings.TrimPrefix(de.Error(), "toml: "))}
		}
		return nil, Errors{m.Errorf(field, "%v", err)}
	}
	v.applyDefaults()
	for _, e := range v.Validate() {
		if isOverridden(e.Field, overridden) {
			e.Field = field + "." + e.Field
		} else {
			e.Msg = "in variant " + name + ": " + e.Msg
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	raw, err := v.render(fmt.Sprintf("# variant %q of %s\n", name, m.File))
	if err != nil {
		return nil, Errors{m.Errorf(field, "%v", err)}
	}
	v.Raw = raw
	return v, nil
}

// isOverridden: field, a key under it, or a table above it is the variant's.
func isOverridden(field string, over map[string]bool) bool {
	for k := range over {
		if k == field || strings.HasPrefix(k, field+".") || strings.HasPrefix(field, k+".") {
			return true
		}
	}
	return false
}

// validateVariants checks [variants] and every variant's manifest. A problem
// of the manifest itself is reported once, not again for each variant.
func (m *Manifest) validateVariants(baseErrs Errors) Errors {
	if len(m.Variants) == 0 {
		return nil
	}
	var errs Errors
	seen := map[string]bool{}
	for _, e := range baseErrs {
		seen[e.Error()] = true
	}
	var names []string
	for k, v := range m.Variants {
		switch v.(type) {
		case map[string]any:
			names = append(names, k)
			if !variantRE.MatchString(k) {
				errs = append(errs, m.Errorf("variants."+k, "variant name %q: want 1-24 lowercase letters, digits or '-'", k))
			}
		case string:
			if k != "base" {
				errs = append(errs, m.Errorf("variants."+k, "unknown key (a variant is a table [variants.%s]; the only other key is base)", k))
			}
		default:
			errs = append(errs, m.Errorf("variants."+k, "want a table [variants.%s] or base = \"<variant>\"", k))
		}
	}
	if _, ok := m.Variants["base"]; ok {
		if b, _ := m.Variants["base"].(string); b != "" {
			if _, ok := m.Variants[b].(map[string]any); !ok {
				errs = append(errs, m.Errorf("variants.base", "%q is not a variant of this manifest", b))
			}
		}
	}
	if len(names) == 1 {
		errs = append(errs, m.Errorf("variants", "one variant (%s): a comparison needs two or more", names[0]))
	}
	sort.Strings(names)
	for _, n := range names {
		if !variantRE.MatchString(n) {
			continue
		}
		_, verrs := m.variant(n)
		for _, e := range verrs {
			if !seen[strings.Replace(e.Error(), "in variant "+n+": ", "", 1)] && !seen[e.Error()] {
				seen[e.Error()] = true
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// document is the manifest (defaults applied, flags copied in) as a
// generic TOML document without its variants.
func (m *Manifest) document() (map[string]any, error) {
	c := *m
	c.Variants = nil
	data, err := toml.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if m.tables != nil { // the kind's own tables, under their names
		data, err := toml.Marshal(m.tables)
		if err != nil {
			return nil, err
		}
		var tables map[string]any
		if err := toml.Unmarshal(data, &tables); err != nil {
			return nil, err
		}
		maps.Copy(doc, tables)
	}
	return doc, nil
}

// merge sets over's keys in doc: tables key by key, other values replaced.
func merge(doc, over map[string]any) {
	for k, v := range over {
		sub, isTable := v.(map[string]any)
		cur, wasTable := doc[k].(map[string]any)
		if isTable && wasTable {
			cur = maps.Clone(cur)
			merge(cur, sub)
			doc[k] = cur
			continue
		}
		if isTable {
			cp := map[string]any{}
			merge(cp, sub)
			v = cp
		}
		doc[k] = v
	}
}

// render writes the manifest as TOML: zero values left out (so a key the
// user did not write stays unwritten, as some rules tell the two apart), the
// groups in the manifest's order (a map would be sorted by name, and the
// order places nodes).
func (m *Manifest) render(header string) ([]byte, error) {
	doc, err := m.document()
	if err != nil {
		return nil, err
	}
	pruneZeros(doc)
	groups, _ := doc["node"].(map[string]any)
	// The generic defaults a kind does not take ([load] for a publishing
	// kind, the group keys it has no use for): left in, the rendered
	// manifest would not parse back.
	s := m.Schema()
	if s.Publishes {
		delete(doc, "load")
	}
	for _, g := range groups {
		if g, ok := g.(map[string]any); ok {
			for _, k := range s.GroupKeysNotFor {
				delete(g, k)
			}
		}
	}
	delete(doc, "node")
	if len(m.Variants) > 0 { // a variant has none; WithRunner keeps them
		doc["variants"] = m.Variants
	}
	top, err := toml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(header)
	b.Write(top)
	for _, g := range m.GroupNames() {
		part, err := toml.Marshal(map[string]any{"node": map[string]any{g: groups[g]}})
		if err != nil {
			return nil, err
		}
		b.WriteString("\n")
		b.Write(bytes.TrimPrefix(part, []byte("[node]\n")))
	}
	return b.Bytes(), nil
}

// pruneZeros drops zero scalars and empty arrays and tables, but not inside
// override tables, whose values are the user's.
func pruneZeros(doc map[string]any) {
	for k, v := range doc {
		switch v := v.(type) {
		case map[string]any:
			if k != "config" && k != "genesis" && k != "sweep" {
				pruneZeros(v)
			}
			if len(v) == 0 {
				delete(doc, k)
			}
		case int64:
			if v == 0 {
				delete(doc, k)
			}
		case float64:
			if v == 0 {
				delete(doc, k)
			}
		case string:
			if v == "" {
				delete(doc, k)
			}
		case []any:
			if len(v) == 0 {
				delete(doc, k)
			}
		}
	}
}

// checkGenesisOverride rejects [genesis] keys and values that cannot be set
// in a genesis.json; whether the release's genesis has the key is checked
// when homes are generated (internal/kinds/cometbft).
func checkGenesisOverride(key string, v any) error {
	if key == "" || strings.ContainsAny(key, " \t\"'[]") {
		return fmt.Errorf("%q is not a genesis key (want e.g. \"consensus_params.block.max_bytes\")", key)
	}
	if why, ok := genesisHarness[key]; ok {
		return fmt.Errorf("benchnet sets %s itself: %s", key, why)
	}
	switch v := v.(type) {
	case string, bool, int64:
		return nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v is not a value a genesis can hold", v)
		}
		return nil
	default:
		return fmt.Errorf("value of type %T cannot be a genesis override (want a string, number or bool)", v)
	}
}

var genesisHarness = map[string]string{
	"validators":   "the plan's validators",
	"chain_id":     "from the testnet's generated genesis",
	"genesis_time": "the time the testnet was generated",
}

// validateGenesis checks the [genesis] table's keys and values.
func (m *Manifest) validateGenesis() Errors {
	var errs Errors
	for key, v := range m.Genesis {
		if sub, ok := v.(map[string]any); ok {
			errs = append(errs, m.Errorf("genesis."+key, "a table: write the dotted key quoted, e.g. \"%s.%s\" = …", key, firstKey(sub)))
			continue
		}
		if err := checkGenesisOverride(key, v); err != nil {
			errs = append(errs, m.Errorf("genesis."+key, "%v", err))
		}
	}
	return errs
}

func firstKey(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "key"
	}
	return keys[0]
}
