package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRenderDirDispatch: RenderDir picks the report by the record in the
// directory, and gives the same bytes as the renderer of that kind of
// directory: the sweep's golden, and for a run its kind's own report
// (Render, through the registry; its golden is the kind's test).
func TestRenderDirDispatch(t *testing.T) {
	own := copyDir(t, chainRun)
	if _, err := Render(own, ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, kind, file string
		golden          string
	}{
		{"testdata/sweep1", "sweep", SweepMarkdownFile, "testdata/sweep1.sweep.md"},
		{chainRun, "run", MarkdownFile, filepath.Join(own, MarkdownFile)},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			dir := copyDir(t, tc.src)
			if got := DirKind(dir); got != tc.kind {
				t.Fatalf("DirKind = %q, want %q", got, tc.kind)
			}
			if _, err := RenderDir(dir, ""); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s", tc.file, tc.golden)
			}
		})
	}
	if _, err := RenderDir(copyDir(t, "testdata/sweep1"), t.TempDir()); err == nil {
		t.Error("a sweep directory took an --output")
	}
}
