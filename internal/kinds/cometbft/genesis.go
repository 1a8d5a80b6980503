package cometbft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// genesisRenamed explains genesis keys that moved between releases (checked
// against the genesis.json of `cometbft init` of v0.34.35, v0.38.17, v1.0.1).
var genesisRenamed = map[string]string{
	"consensus_params.feature.pbts_enable_height":            "PBTS exists from v1.0 on ([feature] in consensus_params)",
	"consensus_params.feature.vote_extensions_enable_height": `v0.38 has "consensus_params.abci.vote_extensions_enable_height"; v1.0 moved it to [feature]`,
	"consensus_params.abci.vote_extensions_enable_height":    `v1.0 moved it to "consensus_params.feature.vote_extensions_enable_height"; v0.34 has no vote extensions`,
	"consensus_params.block.time_iota_ms":                    "only Tendermint/CometBFT v0.34 has it",
	"consensus_params.synchrony.precision":                   "synchrony params exist from v1.0 on (PBTS)",
	"consensus_params.synchrony.message_delay":               "synchrony params exist from v1.0 on (PBTS)",
}

// PatchGenesis sets each dotted key of set in a genesis.json as the release
// generated it. A key the file does not have is an *UnknownKeyError (the
// release would ignore it, or refuse the file). Values take the JSON type
// the release wrote: int64 values in CometBFT's genesis are strings
// ("max_bytes": "22020096"), so a number given for one is written as one.
func PatchGenesis(genesis []byte, set map[string]any, release string) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(genesis))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode genesis.json: %w", err)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		parts := strings.Split(key, ".")
		obj := doc
		for i, p := range parts[:len(parts)-1] {
			next, ok := obj[p].(map[string]any)
			if !ok {
				return nil, genesisUnknown(key, release, strings.Join(parts[:i+1], "."))
			}
			obj = next
		}
		last := parts[len(parts)-1]
		cur, ok := obj[last]
		if !ok {
			return nil, genesisUnknown(key, release, "")
		}
		v, err := genesisValue(cur, set[key])
		if err != nil {
			return nil, fmt.Errorf("genesis key %q: %w", key, err)
		}
		obj[last] = v
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode genesis.json: %w", err)
	}
	return append(out, '\n'), nil
}

func genesisUnknown(key, release, missing string) error {
	e := &UnknownKeyError{Key: key, Hint: genesisRenamed[key]}
	if e.Hint == "" && missing != "" {
		e.Hint = fmt.Sprintf("%s's genesis.json has no %q", release, missing)
	}
	return &GenesisKeyError{e}
}

// GenesisKeyError is an UnknownKeyError about genesis.json.
type GenesisKeyError struct{ *UnknownKeyError }

func (e *GenesisKeyError) Error() string {
	msg := fmt.Sprintf("genesis key %q is not in this release's genesis.json", e.Key)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

func (e *GenesisKeyError) Unwrap() error { return e.UnknownKeyError }

// genesisValue converts v (from the manifest's TOML) to cur's JSON type.
func genesisValue(cur, v any) (any, error) {
	switch cur.(type) {
	case string:
		switch v := v.(type) {
		case string:
			return v, nil
		case int64:
			return strconv.FormatInt(v, 10), nil
		case float64:
			if v != math.Trunc(v) {
				return nil, fmt.Errorf("%v: the release writes an integer here", v)
			}
			return strconv.FormatFloat(v, 'f', -1, 64), nil
		}
	case json.Number:
		switch v := v.(type) {
		case int64:
			return json.Number(strconv.FormatInt(v, 10)), nil
		case float64:
			return json.Number(strconv.FormatFloat(v, 'f', -1, 64)), nil
		}
	case bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%v (%T) does not fit the release's value %v (%T)", v, v, cur, cur)
}
