#!/bin/bash
# The composed scenario live (docs/composed.md, "Live"): the first $WINDOW seconds of each
# model's hour of hour.yaml plus the digits LibTorch model of live_digits.yaml, once in
# `sloserve sim` and once through `sloserve serve` (emulated workers: batches take their
# profiled time; the digits model's workers run it with LibTorch), driven by one
# `sloserve loadgen` per model replaying that model's trace window (digits: its held-out
# images, answered by the real model), all at once. For each method in
# $METHODS (rows of hour.yaml) at the budget $BUDGET. Prints the per-model table; writes
# the JSON of both to $OUT. Real time: about WINDOW + 15 s per method.
#   experiments/composed/live.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), PORT (default 18616),
# OUT (default experiments/composed/results/live), WINDOW (default 120), BUDGET
# (default 18), METHODS (default "static composed"), ADD (models added to hour.yaml's,
# default experiments/composed/live_digits.yaml; empty: hour.yaml's five alone).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
PORT=${PORT:-18616}
OUT=${OUT:-experiments/composed/results/live}
WINDOW=${WINDOW:-120}
BUDGET=${BUDGET:-18}
METHODS=${METHODS:-static composed}
CONFIG=experiments/composed/hour.yaml
ADD=${ADD-experiments/composed/live_digits.yaml}
add=()
[ -n "$ADD" ] && add=(--add "$ADD")
mkdir -p "$OUT"

server=""
stop_server() {
  if [ -n "$server" ]; then
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    server=""
  fi
}
trap stop_server EXIT

for method in $METHODS; do
  echo "== $method" >&2
  # One configuration of the sweep: the method's row as the policy, the budget fixed.
  python3 experiments/composed/one_method.py "$CONFIG" "${add[@]}" "$method" "$BUDGET" "$OUT" \
    > "$OUT/$method.yaml"
  "$BIN" sim "$OUT/$method.yaml" --set duration_s="$WINDOW" --json --no-progress \
    > "$OUT/sim_$method.json"
  # Admission control off, as in sim (serve's default is on: it answers 429 to a request
  # it predicts would miss its SLO, where the sim queues it and counts the miss).
  "$BIN" serve "$OUT/$method.yaml" --set server.port="$PORT" --set engine.admission=off \
    --set server.idle_timeout_s=3600 --set server.header_timeout_s=3600 \
    > "$OUT/serve_$method.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do
    curl -sf "localhost:$PORT/v2/health/ready" > /dev/null 2>&1 && break
    sleep 0.1
  done
  pids=()
  k=0
  while read -r model trace start scale dataset; do
    k=$((k + 1))
    # A model from a repository gets its held-out set: real inputs, accuracy measured.
    data=()
    [ -n "$dataset" ] && data=(--dataset "$dataset")
    "$BIN" loadgen --port "$PORT" --model "$model" "${data[@]}" --arrival rps_trace --trace "$trace" \
      --window-start "$start" --window-end $((start + WINDOW)) --rate-scale "$scale" \
      --seed "$k" --timeout 600 --connections 16 --json > "$OUT/live_${method}_$model.json" &
    pids+=($!)
  done < <(python3 experiments/composed/one_method.py "$CONFIG" "${add[@]}" --workloads)
  for p in "${pids[@]}"; do wait "$p"; done
  stop_server
done
python3 experiments/composed/live_table.py "$OUT" $METHODS
