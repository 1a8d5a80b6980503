package house

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// secondNames may stay: package.Name -> why it is a second name worth its
// cost. Everything else that only renames another package's type or
// constant is a second name for one thing: callers use the owner's name.
var secondNames = map[string]string{
	"gossipsub.MsgIDLen":    "the host's message id length, which is why the manifest's smallest publish size is that length: one value, two meanings",
	"manifest.KindCometBFT": "the manifest's name for the kind a group without one runs; the value is judge.DefaultKind because judge, which cannot import manifest, decides the empty kind of records",
}

const module = "github.com/benchnet/benchnet"

// reexports reports what a top-level spec renames: an exported type alias
// (type A = B) or an exported constant or variable whose value is another
// package's exported name (const A = pkg.B).
func reexports(f *ast.File) []string {
	imported := map[string]bool{} // the module's packages only: time.Second is a unit, not a name
	for _, is := range f.Imports {
		name := strings.Trim(is.Path.Value, `"`)
		if !strings.HasPrefix(name, module+"/") {
			continue
		}
		name = name[strings.LastIndex(name, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		imported[name] = true
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Assign.IsValid() && s.Name.IsExported() {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for i, n := range s.Names {
					if !n.IsExported() || i >= len(s.Values) {
						continue
					}
					if sel, ok := s.Values[i].(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && imported[x.Name] && sel.Sel.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func TestReexportsDetects(t *testing.T) {
	src := `package p
import (
	"time"
	"github.com/benchnet/benchnet/internal/rundir"
)
type A = rundir.Sent
type B struct{}
type c = rundir.Sent
const (
	D = rundir.ResultOK
	E = "e"
	F = time.Second
	g = rundir.ResultOK
)
var H = rundir.Default
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reexports(f), []string{"A", "D", "H"}; !slices.Equal(got, want) {
		t.Errorf("reexports = %v, want %v", got, want)
	}
}

// TestNoSecondNames: no package outside the allow-list re-exports another
// package's type or constant under a name of its own (issue 35, item 5).
func TestNoSecondNames(t *testing.T) {
	seen := map[string]bool{}
	walkModule(t, nil, func(rel string, _ *token.FileSet, f *ast.File) {
		for _, name := range reexports(f) {
			key := f.Name.Name + "." + name
			seen[key] = true
			if _, ok := secondNames[key]; !ok {
				t.Errorf("%s: %s is a second name for another package's; use the owner's name, or allow-list it with its reason", rel, key)
			}
		}
	})
	for key := range secondNames {
		if !seen[key] {
			t.Errorf("allow-list entry %s names no re-export any more: drop it", key)
		}
	}
}
