package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/manifest"
)

// SetKindTables records the kind's own manifest tables (nil: none) as
// JSON, each table under its name (Resolve, and tests that build a plan).
func (t *Testnet) SetKindTables(tables manifest.Tables) error {
	if tables == nil {
		return nil
	}
	data, err := json.Marshal(tables)
	if err != nil {
		return fmt.Errorf("resolve the kind's tables: %w", err)
	}
	if err := json.Unmarshal(data, &t.Tables); err != nil {
		return fmt.Errorf("resolve the kind's tables: %w", err)
	}
	return nil
}

// KindTables decodes the kind's own tables into v, a pointer to the
// kind's manifest.Tables type (its json tags name the tables).
func (t *Testnet) KindTables(v any) error {
	data, err := json.Marshal(t.Tables)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("plan: the %s kind's tables: %w", t.NodeKind(), err)
	}
	return nil
}

// bare is Testnet without its JSON methods.
type bare Testnet

// planKeys are plan.json's own keys; afterTables those of the fields
// declared after Tables, which plan.json writes after the kind's tables.
var planKeys, afterTables = func() (all, after map[string]bool) {
	all, after = map[string]bool{}, map[string]bool{}
	typ, past := reflect.TypeOf(bare{}), false
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Tables" {
			past = true
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		all[name] = true
		if past {
			after[name] = true
		}
	}
	return all, after
}()

// MarshalJSON writes the plan's fields in their order, with the kind's
// tables, each under its name (sorted), where the Tables field is declared.
func (t Testnet) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(bare(t))
	if err != nil || len(t.Tables) == 0 {
		return b, err
	}
	// Where the first key declared after Tables begins (before its comma),
	// else before the closing brace.
	at := len(b) - 1
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		off := int(dec.InputOffset())
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if k, _ := key.(string); afterTables[k] {
			at = off
			break
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	out.Write(b[:at])
	names := make([]string, 0, len(t.Tables))
	for name := range t.Tables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		key, _ := json.Marshal(name)
		out.WriteByte(',')
		out.Write(key)
		out.WriteByte(':')
		out.Write(t.Tables[name])
	}
	out.Write(b[at:])
	return out.Bytes(), nil
}

// UnmarshalJSON reads the plan's fields and, as Tables, every other key:
// the kind's own tables (a reader need not link the kind to keep them).
func (t *Testnet) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, (*bare)(t)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for k, v := range all {
		if !planKeys[k] {
			if t.Tables == nil {
				t.Tables = map[string]json.RawMessage{}
			}
			t.Tables[k] = v
		}
	}
	return nil
}
