package main

import (
	"fmt"
	"path"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/manifest"
)

// loadManifest reads the manifest named by args, or the built-in quickstart.
func loadManifest(args []string) (*manifest.Manifest, error) {
	if len(args) > 0 {
		return manifest.LoadFile(args[0])
	}
	data, err := examples.FS.ReadFile(examples.Default)
	if err != nil {
		return nil, fmt.Errorf("built-in manifest: %w", err)
	}
	return manifest.Parse(path.Join("examples", examples.Default), data)
}
