package rundir

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// resultsPaths lists every results.json field as docs/rundir.md names it:
// dotted paths, "[]." into arrays; a Stats field is named once and its
// members once as "Stats.<member>".
func resultsPaths(typ reflect.Type, prefix string, out *[]string) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		path := prefix + tag
		*out = append(*out, path)
		t := f.Type
		sep := "."
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			if t.Kind() == reflect.Slice {
				sep = "[]."
			}
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct && t != reflect.TypeOf(Stats{}) && t != reflect.TypeOf(time.Time{}) {
			resultsPaths(t, path+sep, out)
		}
	}
}

// TestResultsDocCoversFields: docs/rundir.md has a row for every field of
// results.json. Adding a field without documenting it fails here.
func TestResultsDocCoversFields(t *testing.T) {
	b, err := os.ReadFile("../../docs/rundir.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var paths []string
	resultsPaths(reflect.TypeOf(Results{}), "", &paths)
	resultsPaths(reflect.TypeOf(Stats{}), "Stats.", &paths)
	if len(paths) < 100 {
		t.Fatalf("walked only %d fields", len(paths))
	}
	for _, p := range paths {
		if !strings.Contains(doc, "| `"+p+"` |") {
			t.Errorf("docs/rundir.md has no row for results.json field %s", p)
		}
	}
}
