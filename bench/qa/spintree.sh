#!/usr/bin/env bash
# A graded regression for `benchnet qa`: CometBFT v1.0.1's source (from the
# module proxy) as a git tree whose kvstore spins US µs of CPU in every
# CheckTx (v1.0.1's kvstore runs CheckTx again for each tx of every proposal
# it builds or checks: block production slows with US). Then measure it:
#   bench/qa/spintree.sh 30 /tmp/spin30
#   benchnet qa --baseline cometbft@v1.0.1 --candidate /tmp/spin30 --quick
# Usage: bench/qa/spintree.sh US DIR
set -euo pipefail
us=${1:?usage: spintree.sh US DIR}
work=${2:?usage: spintree.sh US DIR}
cd "$(dirname "$0")/../.."
go mod download github.com/cometbft/cometbft@v1.0.1
src="$(go env GOMODCACHE)/github.com/cometbft/cometbft@v1.0.1"
rm -rf "$work"
mkdir -p "$(dirname "$work")"
cp -r "$src" "$work"
chmod -R u+w "$work"
kv="$work/abci/example/kvstore/kvstore.go"
sig='^func (\*Application) CheckTx(_ context.Context, req \*types.CheckTxRequest) (\*types.CheckTxResponse, error) {$'
grep -q "$sig" "$kv"
sed -i "s|$sig|&\n\tfor t0 := time.Now(); time.Since(t0) < ${us}*time.Microsecond; {\n\t}|" "$kv"
sed -i 's|^\t"strings"$|&\n\t"time"|' "$kv"
g() { git -C "$work" -c user.name=benchnet -c user.email=qa@benchnet -c commit.gpgsign=false "$@"; }
g init -q
g add -A
g commit -q -m "CometBFT v1.0.1, kvstore CheckTx spins ${us} µs"
echo "$work: v1.0.1 with CheckTx spinning ${us} µs ($(g rev-parse --short HEAD))"
