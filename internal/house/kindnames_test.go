package house

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kindWords are the linked kinds' names, which are also release flavours
// ("cometbft@v1.0.1", the gossipsub host's "gossipsub@v0.15.0") and tool
// names (the cometbft binary).
var kindWords = []string{"cometbft", "gossipsub"}

// kindWordFiles may spell a kind word as a string literal outside
// internal/kinds: file -> why it is not a node-kind decision. A kind is
// decided from the descriptor it registers and judge.NodeKind, never by
// comparing with a literal; a new literal elsewhere is either that
// mistake or a flavour/tool name that belongs in this list.
var kindWordFiles = map[string]string{
	"internal/judge/kinds.go":                     "judge.DefaultKind: the one decision of the kind a record or group without one has",
	"internal/manifest/transport.go":              "the release flavour whose v0.40+ has the go-libp2p transport",
	"internal/plan/plan.go":                       "the metrics namespace CometBFT's flavour defaults to",
	"internal/binaries/binaries.go":               "release flavours and their tools' Go packages",
	"internal/binaries/wrapper.go":                "the flavour whose v0.34 builds through the wrapper module",
	"internal/binaries/local.go":                  "the node tool, the only one a file: release has",
	"internal/release/release.go":                 "the release grammar's flavours and their modules",
	"internal/release/tree.go":                    "a source tree's main package directory per flavour",
	"internal/release/file.go":                    "the flavour a file: binary's build info names",
	"internal/testenv/testrel/testrel.go":         "tests' release and tool",
	"internal/history/historytest/historytest.go": "the path of the cometbft kind's golden run directory",
	"cmd/benchnet/up.go":                          "`benchnet build`'s node tool",
	"cmd/benchnet/setup.go":                       "the releases and tools `setup` builds",
}

// kindWordLits are the positions of string literals that are exactly a
// kind word in f.
func kindWordLits(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(kindWords, v) {
			out = append(out, fset.Position(lit.Pos()).String())
		}
		return true
	})
	return out
}

func TestKindWordLitsDetects(t *testing.T) {
	src := "package p\n" +
		"type T struct{ G int `toml:\"gossipsub\"` }\n" +
		"func f(k string) bool { return k == \"cometbft\" || k == `gossipsub` || k == \"cometbft2\" }\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kindWordLits(fset, f), []string{"p.go:3:37", "p.go:3:56"}; !slices.Equal(got, want) {
		t.Errorf("kindWordLits = %v, want %v", got, want)
	}
}

// TestKindWordsStayInKinds: outside internal/kinds, a kind's name is spelt
// as a literal only where it is a release flavour or a tool, or the one
// default (issue 35: "cometbft" was decided in seven places).
func TestKindWordsStayInKinds(t *testing.T) {
	seen := map[string]bool{}
	walkModule(t, func(rel string) bool { return rel == "internal/kinds" }, func(rel string, fset *token.FileSet, f *ast.File) {
		lits := kindWordLits(fset, f)
		if len(lits) == 0 {
			return
		}
		seen[rel] = true
		if _, ok := kindWordFiles[rel]; !ok {
			t.Errorf("%s: a kind's name as a literal outside internal/kinds; decide kinds through judge.NodeKind and the kind's descriptor, or, if it is a release flavour or tool name, list the file in kindWordFiles with why", strings.Join(lits, ", "))
		}
	})
	for rel := range kindWordFiles {
		if !seen[rel] {
			t.Errorf("kindWordFiles lists %s, which spells no kind word any more: drop it", rel)
		}
	}
}
