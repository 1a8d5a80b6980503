package manifest

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one manifest field.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one manifest, reported together.
type Errors []*FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	if len(es) == 1 {
		return "invalid manifest: " + lines[0]
	}
	return fmt.Sprintf("invalid manifest (%d problems):\n  %s", len(es), strings.Join(lines, "\n  "))
}

func joinKey(k []string) string { return strings.Join(k, ".") }
