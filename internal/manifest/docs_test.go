package manifest

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// docRow is one row of a key table of docs/manifest.md: the keys its first
// cell names, its default cell, and the table section ("" = top level,
// "network", "node.<group>", "[perturb]", …) it sits under.
type docRow struct {
	section string
	keys    []string
	def     string
	line    int
}

var backticked = regexp.MustCompile("`([^`]+)`")

// manifestDoc reads docs/manifest.md's key tables: section rows are
// "**`[x]`**" (or "`[x]`" for a sub-table) and reset at each table header.
func manifestDoc(t *testing.T) (rows []docRow, sections map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("../../docs/manifest.md")
	if err != nil {
		t.Fatal(err)
	}
	sections = map[string]bool{}
	section := ""
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		first := strings.TrimSpace(cells[0])
		if first == "key" || strings.HasPrefix(first, "---") {
			section = ""
			continue
		}
		names := backticked.FindAllStringSubmatch(first, -1)
		if len(names) == 0 {
			continue
		}
		if n := names[0][1]; strings.HasPrefix(n, "[") {
			section = strings.Trim(n, "[]")
			if strings.HasPrefix(n, "[[") {
				section = "[" + section + "]"
			}
			sections[section] = true
			continue
		}
		r := docRow{section: section, line: i + 1}
		for _, n := range names {
			r.keys = append(r.keys, n[1])
		}
		if len(cells) > 1 {
			r.def = strings.TrimSpace(cells[1])
		}
		rows = append(rows, r)
	}
	return rows, sections
}

// docField is one key of the manifest structs: its table and its key.
type docField struct{ section, key string }

// manifestFields walks the manifest structs' toml tags: a struct field is
// a table, a map of structs a named table (node.<group>), a slice of
// structs an array of tables ([perturb]), a map[string]any a free table.
func manifestFields(typ reflect.Type, section string, out *[]docField, tables *[]string) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		name := tag
		if section != "" && !strings.HasPrefix(section, "[") {
			name = section + "." + tag
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(rundir.Duration{}):
			*tables = append(*tables, name)
			manifestFields(ft, name, out, tables)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			*tables = append(*tables, name)
			manifestFields(ft.Elem(), name, out, tables)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Pointer:
			*tables = append(*tables, "["+name+"]")
			manifestFields(ft.Elem().Elem(), "["+name+"]", out, tables)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Pointer:
			group := name + ".<group>"
			*tables = append(*tables, group)
			manifestFields(ft.Elem().Elem(), group, out, tables)
		case ft.Kind() == reflect.Map:
			*tables = append(*tables, name+"*") // a free table: [genesis], [variants.<name>], [sweep]
		default:
			*out = append(*out, docField{section, tag})
		}
	}
}

// TestManifestDocCoversFields: every key of the manifest structs has a row
// in docs/manifest.md under its own table, and every table a heading row.
// Adding a field without documenting it fails here.
func TestManifestDocCoversFields(t *testing.T) {
	rows, sections := manifestDoc(t)
	var fields []docField
	var tables []string
	manifestFields(reflect.TypeOf(Manifest{}), "", &fields, &tables)
	for _, k := range kinds.Names() { // the kinds' own tables (kindtest links them)
		if s, _ := kinds.Get(k); s.NewTables != nil {
			manifestFields(reflect.TypeOf(s.NewTables()).Elem(), "", &fields, &tables)
		}
	}
	if len(fields) < 50 {
		t.Fatalf("walked only %d manifest keys", len(fields))
	}
	for _, tb := range tables {
		found := false
		for s := range sections {
			if s == tb || strings.HasSuffix(tb, "*") && strings.HasPrefix(s, strings.TrimSuffix(tb, "*")) {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/manifest.md has no row for the table [%s]", strings.TrimSuffix(tb, "*"))
		}
	}
	for _, f := range fields {
		found := false
		for _, r := range rows {
			if r.section != f.section {
				continue
			}
			for _, k := range r.keys {
				if k == f.key {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("docs/manifest.md has no row for %s (table %q)", f.key, f.section)
		}
	}
}

// The manifests whose defaults the doc's rows are checked against: a key
// set to its documented default must parse to what leaving it out gives,
// for one of them (the accounts and gossip keys only apply to theirs).
var docBases = []map[string][]string{
	{"node.validator": {"count = 1"}},
	{"node.validator": {"count = 1", `app = "accounts"`}, "load": {`workload = "accounts"`}},
	{"node.gossip": {"count = 2", `kind = "gossipsub"`}, "network": {`topology = "line"`}},
}

func renderBase(base map[string][]string, section, kv string) string {
	var b strings.Builder
	for _, s := range []string{"", "network", "node.validator", "node.gossip", "load", "infra", "publish", "gossipsub"} {
		lines := base[s]
		if s == section && kv != "" {
			lines = append(append([]string{}, lines...), kv)
		}
		if len(lines) == 0 {
			continue
		}
		if s != "" {
			fmt.Fprintf(&b, "[%s]\n", s)
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// field finds key of section in m (node.<group> is the base's one group).
func field(m *Manifest, section, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(m).Elem()
	switch {
	case section == "node.<group>":
		for _, g := range m.Node {
			v = reflect.ValueOf(g).Elem()
		}
	case section != "":
		v = structField(v, section)
		if !v.IsValid() && m.tables != nil { // a kind's own table
			v = structField(reflect.ValueOf(m.tables).Elem(), section)
		}
	}
	if !v.IsValid() {
		return v, false
	}
	v = structField(v, key)
	return v, v.IsValid()
}

func structField(v reflect.Value, tag string) reflect.Value {
	for i := range v.NumField() {
		if strings.Split(v.Type().Field(i).Tag.Get("toml"), ",")[0] == tag {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// TestManifestDocDefaults: every row whose default cell is plain values
// (`x`, or `x` / `y` for a row of several keys) states the default the
// code applies: setting the key to it parses to the same value as leaving
// it out.
func TestManifestDocDefaults(t *testing.T) {
	rows, _ := manifestDoc(t)
	checked := 0
	for _, r := range rows {
		vals := strings.Split(r.def, " / ")
		if len(vals) != len(r.keys) || r.section == "[perturb]" || r.section == "rotate" || r.section == "node.<group>.config" {
			continue
		}
		for i, key := range r.keys {
			v := vals[i]
			if !strings.HasPrefix(v, "`") || !strings.HasSuffix(v, "`") || strings.Count(v, "`") != 2 {
				continue
			}
			v = strings.Trim(v, "`")
			section := r.section
			ok, tried := false, 0
			for _, base := range docBases {
				sec := section
				if section == "node.<group>" {
					sec = "node.validator"
					if _, gossip := base["node.gossip"]; gossip {
						sec = "node.gossip"
					}
				}
				def, err := Parse("base.toml", []byte(renderBase(base, "", "")))
				if err != nil {
					t.Fatalf("base manifest: %v", err)
				}
				set, err := Parse("doc.toml", []byte(renderBase(base, sec, key+" = "+v)))
				if err != nil {
					continue
				}
				a, okA := field(def, section, key)
				b, okB := field(set, section, key)
				if !okA || !okB {
					continue
				}
				tried++
				if reflect.DeepEqual(a.Interface(), b.Interface()) || emptySlices(a, b) {
					ok = true
					break
				}
			}
			if tried == 0 {
				continue // no base takes the key set at all (m, degree, peers: other topologies only)
			}
			checked++
			if !ok {
				t.Errorf("docs/manifest.md:%d: %s default %s is not what the code applies (or does not parse)", r.line, key, v)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d defaults checked", checked)
	}
}

// emptySlices: a documented [] is the code's nil slice.
func emptySlices(a, b reflect.Value) bool {
	return a.Kind() == reflect.Slice && b.Kind() == reflect.Slice && a.Len() == 0 && b.Len() == 0
}
