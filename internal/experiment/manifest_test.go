package experiment

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

func quickstartWith(t *testing.T, table string) (*manifest.Manifest, error) {
	t.Helper()
	base, err := os.ReadFile("../../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	return manifest.Parse("q.toml", append(append(base, '\n'), table...))
}

func TestSweepFromManifest(t *testing.T) {
	m, err := quickstartWith(t, "[sweep]\nconnections = [1, 2, 4]\nrates = [100, 250.5]\nduration = \"8s\"\nrepeats = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	sw, err := SweepFromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sw.Connections, []int{1, 2, 4}) || !reflect.DeepEqual(sw.Rates, []float64{100, 250.5}) ||
		sw.Duration.Duration != 8*time.Second || sw.Repeats != 2 || sw.MinCommitted != 0.99 {
		t.Errorf("decoded %+v", sw)
	}

	none, err := quickstartWith(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if sw, err := SweepFromManifest(none); err != nil || !reflect.DeepEqual(sw, DefaultSweep()) {
		t.Errorf("no table: %+v, %v", sw, err)
	}

	// Errors name the manifest file, the line and sweep.<field>.
	lines := strings.Count(string(mustRead(t)), "\n") + 1
	tests := []struct {
		table string
		want  []string
	}{
		{"[sweep]\nrates = [100]\nrepeat = 2\n", []string{"sweep.repeat: unknown key"}},
		{"[sweep]\nrates = [100, 100]\nrepeats = 0\n", []string{"sweep.rates: 100 given twice", "sweep.repeats: 0"}},
		{"[sweep]\nrates = [100]\nmin_committed = 1.5\n", []string{"sweep.min_committed"}},
	}
	for _, tt := range tests {
		m, err := quickstartWith(t, tt.table)
		if err != nil {
			t.Fatal(err)
		}
		_, err = SweepFromManifest(m)
		var merrs manifest.Errors
		if !errors.As(err, &merrs) {
			t.Fatalf("%q: %v is not manifest.Errors", tt.table, err)
		}
		for _, w := range tt.want {
			found := false
			for _, e := range merrs {
				if strings.Contains(e.Error(), w) && e.File == "q.toml" && e.Line > lines {
					found = true
				}
			}
			if !found {
				t.Errorf("%q: errors %v lack %q at a line of the table", tt.table, err, w)
			}
		}
	}
}

func mustRead(t *testing.T) []byte {
	b, err := os.ReadFile("../../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
