// Package examples embeds the example manifests so the built-in default
// (the quickstart) works from any directory.
package examples

import "embed"

//go:embed *.toml
var FS embed.FS

// Default is the manifest used when a command is given none.
const Default = "quickstart.toml"
