package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Record is the codec of a parent directory's index file (sweep.json,
// compare.json, soak.json, qa.json): its name, its schema version, encoder
// and decoder side by side. An experiment writes its record after every
// step, so an interrupted one keeps what it finished, and its report
// renders from the record alone.
type Record[T any] struct {
	Name string
	// Schema is the schema_version this benchnet writes; bump it when a
	// field changes meaning.
	Schema int
	// Exact refuses any other schema on read; else only newer ones are
	// refused (older files stay readable).
	Exact bool
	// Check, when set, refuses a decoded record that is not this record's
	// (a qa.json of another kind); its error is prefixed with the path.
	Check func(*T) error
}

// Path is the record's file in dir.
func (r Record[T]) Path(dir string) string { return filepath.Join(dir, r.Name) }

// Exists reports whether dir holds the record.
func (r Record[T]) Exists(dir string) bool {
	st, err := os.Stat(r.Path(dir))
	return err == nil && st.Mode().IsRegular()
}

// Read decodes dir's record, refusing a schema this benchnet cannot read.
func (r Record[T]) Read(dir string) (*T, error) {
	data, err := os.ReadFile(r.Path(dir))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Name, err)
	}
	var head struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode %s: %w", r.Path(dir), err)
	}
	switch {
	case r.Exact && head.SchemaVersion != r.Schema:
		return nil, fmt.Errorf("%s: schema_version %d, this benchnet reads %d", r.Path(dir), head.SchemaVersion, r.Schema)
	case head.SchemaVersion > r.Schema:
		return nil, fmt.Errorf("%s: schema_version %d is newer than this benchnet reads (%d)", r.Path(dir), head.SchemaVersion, r.Schema)
	}
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("decode %s: %w", r.Path(dir), err)
	}
	if r.Check != nil {
		if err := r.Check(v); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Path(dir), err)
		}
	}
	return v, nil
}

// Write encodes v (indented, newline-terminated) into dir atomically.
func (r Record[T]) Write(dir string, v *T) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", r.Name, err)
	}
	return WriteAtomic(r.Path(dir), append(data, '\n'))
}
