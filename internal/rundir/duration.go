package rundir

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written as a Go duration string ("500ms")
// in TOML and JSON: the manifest's durations and the records' are this one
// type, owned here so that rundir stays a leaf.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("not a duration (want e.g. \"500ms\", \"90s\"): %q", b)
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
