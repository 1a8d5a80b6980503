package experiment

import (
	"context"
	"fmt"

	"github.com/benchnet/benchnet/internal/manifest"
)

// VariantEnv is one variant's testnet in a grid over [variants] (Runner's
// Variants): how to bring it up, and the load its cells start from.
type VariantEnv struct {
	Base manifest.Load
	Open Opener
}

// variantEnvs opens each of the sweep's variants (m's [variants]) on the
// lab, its testnets' run directories under nets.
func variantEnvs(m *manifest.Manifest, names []string, lab Lab, nets string) (map[string]VariantEnv, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := map[string]VariantEnv{}
	for _, name := range names {
		vm, err := m.Variant(name)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		out[name] = VariantEnv{Base: vm.Load, Open: func(ctx context.Context) (Testnet, error) { return lab.Open(ctx, vm, nets) }}
	}
	return out, nil
}

// checkVariantLoads refuses, before anything starts, a variant whose
// manifest the grid's loads make invalid.
func (s *Sweep) checkVariantLoads(m *manifest.Manifest) error {
	for _, name := range s.Variants {
		vm, err := m.Variant(name)
		if err != nil {
			return &UsageError{fmt.Errorf("variant %s: %w", name, err)}
		}
		if err := s.CheckLoads(vm); err != nil {
			return fmt.Errorf("variant %s: %w", name, err)
		}
	}
	return nil
}
