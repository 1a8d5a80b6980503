#!/usr/bin/env bash
# The A/A history of issue 31 on real nodes: one build recorded ROUNDS times
# (default 10) interleaved with two others, then `benchnet history` on the
# series. The three builds, in release order:
#   A  cometbft@v1.0.1, the tag;
#   A' v1.0.1's source as a git tree, unchanged (the same code built another
#      way: its series against A is A/A);
#   B  the next commit of that tree, whose kvstore sleeps STEP_MS ms (default
#      1500) in every FinalizeBlock: a known step in blocks/min and latency.
#      (A sleep shorter than timeout_commit, 1 s, hides in it: the next height
#      starts timeout_commit after the commit whatever FinalizeBlock took;
#      300 ms moved blocks/min by -0.8 %, 2026-11-30.)
# Each round runs the quickstart (4 validators, 200 tx/s) for DURATION
# (default 20s) once per build, the order reversed every other round, each run
# its own session in a history database of its own. What must come out: no
# change point between A and A', none in any build's own sessions (the drift
# check over its ROUNDS sessions), and the planted one between A' and B.
# Works on a fresh clone (the v1.0.1 source comes from the module proxy).
# Usage: bench/history/aa.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/benchnet-aa-history}
rounds=${ROUNDS:-10}
step_ms=${STEP_MS:-1500}
duration=${DURATION:-20s}
bn=${BENCHNET:-}
if [ -z "$bn" ]; then
  CGO_ENABLED=0 go build -o "$work.bin" ./cmd/benchnet
  bn="$work.bin"
fi
. bench/lib/v101tree.sh
rm -rf "$work"
v101_tree "$work/step"
base=$(g rev-parse HEAD)
kv="$work/step/abci/example/kvstore/kvstore.go"
sig='^func (app \*Application) FinalizeBlock(_ context.Context, req \*types.FinalizeBlockRequest) (\*types.FinalizeBlockResponse, error) {$'
grep -q "$sig" "$kv"
sed -i "s|$sig|&\n\ttime.Sleep(${step_ms} * time.Millisecond)|" "$kv"
sed -i 's|^\t"strings"$|&\n\t"time"|' "$kv"
g add -A
g commit -q -m "kvstore: sleep ${step_ms} ms in every FinalizeBlock"
step=$(g rev-parse HEAD)
g worktree add -q "$work/base" "$base"
echo "builds: A cometbft@v1.0.1, A' $work/base (${base:0:12}), B $work/step (${step:0:12}, +${step_ms} ms a block)"
"$bn" build cometbft@v1.0.1 "$work/base" "$work/step" >/dev/null
for b in a:cometbft@v1.0.1 a2:"$work/base" b:"$work/step"; do
  sed "s|^release = \"cometbft@v1.0.1\"|release = \"${b#*:}\"|" examples/quickstart.toml >"$work/${b%%:*}.toml"
done
start=$(date +%s)
for r in $(seq 1 "$rounds"); do
  order=(a a2 b)
  [ $((r % 2)) = 0 ] && order=(b a2 a)
  for m in "${order[@]}"; do
    echo "round $r/$rounds: $m"
    "$bn" run "$work/$m.toml" --duration "$duration" -o "$work/runs" --history "$work/history.db" >"$work/run-$r-$m.log" 2>&1 ||
      { echo "run $r $m failed (exit $?): $work/run-$r-$m.log"; tail -5 "$work/run-$r-$m.log"; }
  done
done
echo "runs: $(($(date +%s) - start)) s for $rounds rounds"
"$bn" history --history "$work/history.db" --scenario quickstart \
  --order "cometbft@v1.0.1,${base:0:12},${step:0:12}" -o "$work" --csv "$work/history.csv"
