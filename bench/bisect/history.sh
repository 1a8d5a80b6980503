#!/usr/bin/env bash
# The synthetic regression history of issue 31, end to end: CometBFT v1.0.1
# as a git repository with 16 commits after it, 15 harmless ones and one
# (the SPIN_AT-th, default 11) whose kvstore spins SPIN_US µs of CPU in every
# CheckTx (v1.0.1's kvstore runs CheckTx again for each tx of every proposal
# it builds or checks: block production slows). Then `benchnet bisect` must
# name that commit within ceil(log2 16) + 2 = 6 decisions; the wall time is
# printed. Works on a fresh clone (the v1.0.1 source comes from the module
# proxy). Usage: bench/bisect/history.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/benchnet-bisect-history}
spin_at=${SPIN_AT:-11}
spin_us=${SPIN_US:-30}
. bench/lib/v101tree.sh
rm -rf "$work"
tree="$work/cometbft"
v101_tree "$tree"
good=$(g rev-parse HEAD)
kv="$tree/abci/example/kvstore/kvstore.go"
harmless=(README.md CHANGELOG.md UPGRADING.md docs/README.md version/version.go types/block.go
  mempool/clist_mempool.go consensus/README.md abci/README.md libs/log/logger.go rpc/core/status.go
  p2p/switch.go state/execution.go node/node.go config/config.go cmd/cometbft/main.go)
for i in $(seq 1 16); do
  if [ "$i" = "$spin_at" ]; then
    grep -q '^func (\*Application) CheckTx(_ context.Context, req \*types.CheckTxRequest) (\*types.CheckTxResponse, error) {$' "$kv"
    sed -i 's|^func (\*Application) CheckTx(_ context.Context, req \*types.CheckTxRequest) (\*types.CheckTxResponse, error) {$|&\n\tfor t0 := time.Now(); time.Since(t0) < '"$spin_us"'*time.Microsecond; {\n\t}|' "$kv"
    sed -i 's|^\t"strings"$|&\n\t"time"|' "$kv"
    msg="kvstore: validate every tx more carefully (spins ${spin_us} µs per CheckTx)"
  else
    f="$tree/${harmless[$((i - 1))]}"
    [ -e "$f" ] || f="$tree/README.md"
    case "$f" in
    *.go) printf '\n// harmless change %d\n' "$i" >>"$f" ;;
    *) printf '\n<!-- harmless change %d -->\n' "$i" >>"$f" ;;
    esac
    msg="harmless change $i ($(basename "$f"))"
  fi
  g add -A
  g commit -q -m "$msg"
done
bad=$(g rev-parse HEAD)
culprit=$(g rev-parse "HEAD~$((16 - spin_at))")
echo "history: $good .. $bad; the regression is $culprit"
start=$(date +%s)
rc=0
go run ./cmd/benchnet bisect "$tree" --good "$good" --bad "$bad" -o "$work/runs" || rc=$?
echo "bisect: exit $rc after $(($(date +%s) - start)) s; the planted regression is $culprit"
exit $rc
