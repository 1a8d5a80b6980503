package manifest

import (
	"strings"
	"testing"
)

// errCase is a manifest that must be refused, with what its error must
// contain (file:line and field); a want starting "invalid manifest: " is
// the whole error.
type errCase struct {
	name, toml string
	want       []string
}

// checkErrors parses each case as bad.toml and checks its error.
func checkErrors(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", []byte(c.toml))
			if err == nil {
				t.Fatalf("no error for:\n%s", c.toml)
			}
			for _, w := range c.want {
				if strings.HasPrefix(w, "invalid manifest: ") && err.Error() != w {
					t.Errorf("error %q\n want exactly %q", err, w)
				}
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}
