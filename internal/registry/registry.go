// Package registry is the one shape of benchnet's registries: things of
// one sort (a node kind's driver, analysis, reports or judged figures, a
// runner, an experiment kind) registered under a name by their package's
// init and found by that name by the generic layers, which so import none
// of them (internal/kinds and the runners' blank imports link them).
package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Of holds the registered things of one sort.
type Of[T any] struct {
	what string // for messages: "node kind", "runner"
	mu   sync.Mutex
	m    map[string]T
}

// New is an empty registry of what ("node kind": used in its messages).
func New[T any](what string) *Of[T] {
	return &Of[T]{what: what, m: map[string]T{}}
}

// Register adds v under name; registering a name twice is a programming
// error and panics.
func (r *Of[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(fmt.Sprintf("registry: %s %q registered twice", r.what, name))
	}
	r.m[name] = v
}

// Get is what name registered, if anything.
func (r *Of[T]) Get(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[name]
	return v, ok
}

// Lookup is Get with an error that names what this binary has.
func (r *Of[T]) Lookup(name string) (T, error) {
	v, ok := r.Get(name)
	if !ok {
		return v, fmt.Errorf("no %s %q in this binary (have %s)", r.what, name, strings.Join(r.Names(), ", "))
	}
	return v, nil
}

// Names are the registered names, sorted.
func (r *Of[T]) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.m))
}

// Unregister removes name (tests that register a fake).
func (r *Of[T]) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, name)
}
