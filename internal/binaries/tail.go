package binaries

import (
	"bytes"
	"strings"
	"sync"
)

// tailBuffer keeps the last max lines written to it, for progress lines and
// for the error of a failed build (go's output is long; the end says why).
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, string(t.partial[:i]))
		t.partial = t.partial[i+1:]
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

// last is the most recent complete line, or "(no output yet)".
func (t *tailBuffer) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output yet)"
	}
	return t.lines[len(t.lines)-1]
}

// String is the kept lines plus any unterminated last line, indented.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if len(t.partial) > 0 {
		lines = append(lines, string(t.partial))
	}
	if len(lines) > t.max {
		lines = lines[len(lines)-t.max:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
