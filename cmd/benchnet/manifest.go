package main

import (
	"context"
	"fmt"
	"path"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/manifest"
)

// loadManifest reads the manifest named by args, or the built-in quickstart,
// and checks its release references (a tag on the proxy, a source tree, a
// binary) before anything is built: a bad one is exit 2 at its line.
func loadManifest(ctx context.Context, args []string) (*manifest.Manifest, error) {
	var m *manifest.Manifest
	var err error
	if len(args) > 0 {
		m, err = manifest.LoadFile(args[0])
	} else {
		var data []byte
		if data, err = examples.FS.ReadFile(examples.Default); err != nil {
			return nil, fmt.Errorf("built-in manifest: %w", err)
		}
		m, err = manifest.Parse(path.Join("examples", examples.Default), data)
	}
	if err != nil {
		return nil, err
	}
	if err := m.CheckReleases(ctx); err != nil {
		return nil, err
	}
	return m, nil
}
