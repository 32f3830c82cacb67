#!/bin/bash
# Sim against live for a multi-model pool (docs/multi-model.md, "Live"): live/pool.yaml
# (12 T5 models, Zipf popularity, 8 emulated workers, 4 queries/s for 90 s) for each
# placement, once in `sloserve sim` and once through `sloserve serve` driven by one
# `sloserve loadgen` per model at that model's rate (Poisson, the rates the sim reports),
# all at once, none giving up on a request (--timeout 600: the sim's queries wait as
# long as it takes, so a client timeout would make the live queues shorter). Live cold
# starts from /metrics. Prints the markdown table; writes the JSON
# of both to $OUT. Real time: about 7 minutes.
#   experiments/multi-model/live.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), PORT (default 18615),
# OUT (default experiments/multi-model/results/live), PLACEMENTS (default
# "random colocation model_aware adaptive").
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
PORT=${PORT:-18615}
OUT=${OUT:-experiments/multi-model/results/live}
PLACEMENTS=${PLACEMENTS:-random colocation model_aware adaptive}
CONFIG=experiments/multi-model/live/pool.yaml
DURATION=$(awk '$1 == "duration_s:" {print $2}' "$CONFIG")
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

for placement in $PLACEMENTS; do
  echo "== $placement" >&2
  "$BIN" sim "$CONFIG" --set policy.placement="$placement" --json --no-progress \
    > "$OUT/sim_$placement.json"
  # Connections stay open for the whole run. loadgen opens its connections up front and
  # does not resend a request on one the server has closed: with the defaults (a new
  # connection's headers within server.header_timeout_s = 10 s, a keep-alive one idle at
  # most server.idle_timeout_s = 60 s) a model at 0.1 queries/s lost every request.
  "$BIN" serve "$CONFIG" --set server.port="$PORT" --set policy.placement="$placement" \
    --set server.idle_timeout_s=3600 --set server.header_timeout_s=3600 \
    > "$OUT/serve_$placement.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do
    curl -sf "localhost:$PORT/v2/health/ready" > /dev/null 2>&1 && break
    sleep 0.1
  done
  # One loadgen per model, at the rate the sim gave it, each with its own seed.
  pids=()
  k=0
  while read -r model qps; do
    k=$((k + 1))
    "$BIN" loadgen --port "$PORT" --model "$model" --datatype BYTES --shape 1 \
      --arrival poisson --qps "$qps" --duration "$DURATION" --seed "$k" --timeout 600 \
      --connections 8 --json \
      > "$OUT/live_${placement}_$k.json" &
    pids+=($!)
  done < <(python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r.get("model") not in (None, "all"): print(r["model"], r["load_qps"])' "$OUT/sim_$placement.json")
  for p in "${pids[@]}"; do wait "$p"; done
  curl -sf "localhost:$PORT/metrics" | awk '$1 == "sloserve_cold_starts_total" {print $2}' \
    > "$OUT/live_${placement}_cold_starts.txt"
  stop_server
done
python3 experiments/multi-model/live_table.py "$OUT" $PLACEMENTS
