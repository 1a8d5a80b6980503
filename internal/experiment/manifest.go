package experiment

import (
	"errors"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/manifest"
)

// SweepFromManifest returns the manifest's [sweep] table over the defaults,
// strictly decoded and validated; every error names sweep.<field> and its
// line in the manifest. No table: the defaults.
func SweepFromManifest(m *manifest.Manifest) (*Sweep, error) {
	if len(m.Sweep) == 0 {
		return DefaultSweep(), nil
	}
	// The manifest keeps the table as a map (its schema is ours); encode it
	// back and decode it strictly into the typed config.
	data, err := toml.Marshal(m.Sweep)
	if err != nil {
		return nil, manifest.Errors{m.Errorf("sweep", "%v", err)}
	}
	cfg, err := Decode("sweep", data)
	if err != nil {
		var errs manifest.Errors
		for _, line := range strings.Split(err.Error(), "\n") {
			// "line N: key: message" of the re-encoded table: name the key
			// and find its line in the manifest instead.
			_, rest, _ := strings.Cut(line, ": ")
			key, msg, _ := strings.Cut(rest, ": ")
			errs = append(errs, m.Errorf("sweep."+key, "%s", msg))
		}
		return nil, errs
	}
	sw := cfg.(*Sweep)
	if verrs := sw.Validate(); len(verrs) > 0 {
		return nil, locate(m, verrs)
	}
	return sw, nil
}

// locate turns Validate's field errors into manifest errors at the
// [sweep] table's lines.
func locate(m *manifest.Manifest, verrs []error) manifest.Errors {
	var errs manifest.Errors
	for _, e := range verrs {
		var fe *manifest.FieldError
		if errors.As(e, &fe) {
			errs = append(errs, m.Errorf("sweep."+fe.Field, "%s", fe.Msg))
		} else {
			errs = append(errs, m.Errorf("sweep", "%v", e))
		}
	}
	return errs
}
