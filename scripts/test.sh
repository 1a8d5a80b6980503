#!/usr/bin/env bash
# The test command of the README: prepares a fresh machine (Debian packages,
# pinned CometBFT release binaries, Go modules; all cached after the first
# time) and runs every test: BENCHNET_INTEGRATION=1 turns the integration
# tests on (namespaces, real nodes, docker; they need root). Without it, or
# with -short, `go test ./...` is the fast tier: the unit tests alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build configuration for everything: the tests build benchnet static
# (its gossip hosts run it in FROM scratch images), and with cgo on for the
# rest, every package was compiled twice (~1 min of CI). Release builds set
# CGO_ENABLED=0 themselves; no package of benchnet uses cgo.
export CGO_ENABLED=0
go run ./cmd/benchnet setup --tests
go vet ./...
# One test binary at a time: the integration tests run real nodes and time
# emulated links on a 2-core machine, and must not starve each other.
# cmd/benchnet holds two real-node QAs (~10 min each), hence the 40 min per package.
# testsum prints what plain go test would, then the slowest tests: the
# log says where CI's minutes go (the exit status stays go test's).
BENCHNET_INTEGRATION=1 go test -json -p 1 -count=1 -timeout 40m ./... "$@" | go run ./scripts/testsum
# A count, not a duration: Go 1.26's fuzz coordinator can report its own
# -fuzztime deadline as a failure, "context deadline exceeded" with no crasher
# (golang/go#75804, fixed in 1.27; it failed one CI run at 31 s). 100000 execs
# is about 30 s here. A new input's minimisation may take up to a minute by
# default, which would eat the whole budget (seen: 55 execs in 30 s): cap it.
go test -run '^$' -fuzz '^FuzzManifest$' -fuzztime 100000x -fuzzminimizetime 3s -timeout 10m ./internal/manifest
