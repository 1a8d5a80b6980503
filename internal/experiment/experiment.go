// Package experiment is the layer above one measurement. A measurement is a
// load applied to a running testnet, producing one ordinary run directory
// (scenario.MeasureLoad). An experiment (a sweep of loads, a saturation
// search, a soak) is a typed, strictly decoded config with Validate() in a
// registry; it runs measurements and writes a parent directory with an index
// (sweep.json) that its report renders from disk alone.
package experiment

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/registry"
)

// Config is one experiment's configuration.
type Config interface {
	Kind() string
	// Validate returns every problem, each naming its field.
	Validate() []error
}

var kinds = registry.New[func() Config]("experiment")

// Register adds an experiment kind; new returns its config with defaults.
func Register(kind string, new func() Config) { kinds.Register(kind, new) }

// Kinds lists the registered experiment kinds.
func Kinds() []string { return kinds.Names() }

// New returns a registered kind's config with its defaults.
func New(kind string) (Config, error) {
	f, ok := kinds.Get(kind)
	if !ok {
		return nil, fmt.Errorf("unknown experiment %q (known: %v)", kind, Kinds())
	}
	return f(), nil
}

// Decode strictly decodes a TOML table over kind's defaults: an unknown key
// is an error naming it and its line.
func Decode(kind string, data []byte) (Config, error) {
	cfg, err := New(kind)
	if err != nil {
		return nil, err
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			var errs []error
			for _, e := range strict.Errors {
				line, _ := e.Position()
				errs = append(errs, fmt.Errorf("line %d: %s: unknown key", line, joinKey(e.Key())))
			}
			return nil, errors.Join(errs...)
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, fmt.Errorf("line %d: %s: %s", line, joinKey(de.Key()), de.Error())
		}
		return nil, err
	}
	return cfg, nil
}

func joinKey(k []string) string {
	var b bytes.Buffer
	for i, s := range k {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
