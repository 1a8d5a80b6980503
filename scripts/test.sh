#!/usr/bin/env bash
# The test command of the README: prepares a fresh machine (Debian packages,
# pinned CometBFT release binaries, Go modules; all cached after the first
# time) and runs every test: BENCHNET_INTEGRATION=1 turns the integration
# tests on (namespaces, real nodes, docker; they need root). Without it, or
# with -short, `go test ./...` is the fast tier: the unit tests alone.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/benchnet setup --tests
go vet ./...
# One test binary at a time: the integration tests run real nodes and time
# emulated links on a 2-core machine, and must not starve each other.
# cmd/benchnet holds two real-node QAs (~10 min each), hence the 40 min per package.
BENCHNET_INTEGRATION=1 go test -p 1 -count=1 -timeout 40m ./... "$@"
# A new input's minimisation may take up to a minute by default, which would
# eat the whole budget (seen: 55 execs in 30 s): cap it.
go test -run '^$' -fuzz '^FuzzManifest$' -fuzztime 30s -fuzzminimizetime 3s ./internal/manifest
