#!/bin/bash
# Live section 6.2 through `sloserve serve`: 10 sequential t5-small translation requests
# (each sent when the previous answer came back) to 8 emulated workers that start with
# no model resident, with the engine's placement `random` (the thesis' default
# scheduler) and `model_aware` (colocation); prints the wall time of the 10 requests and
# the server's sloserve_cold_starts_total from /metrics. Real time: about 45 s.
#   experiments/model-aware/live_sec62.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), PORT (default 18613),
# SEEDS (default "1": the engine's random placement seeds to run).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
PORT=${PORT:-18613}
BODY='{"inputs":[{"name":"text","datatype":"BYTES","shape":[1],"data":["quick brown fox jumps over"]}]}'
echo "placement seed requests wall_s cold_starts"
for placement in random model_aware; do
  for seed in ${SEEDS:-1}; do
    "$BIN" serve "experiments/model-aware/live/serve_$placement.yaml" --set server.port="$PORT" \
      --set seed="$seed" > /dev/null 2>&1 &
    server=$!
    for _ in $(seq 100); do
      curl -sf "localhost:$PORT/v2/health/ready" > /dev/null 2>&1 && break
      sleep 0.1
    done
    start=$(date +%s.%N)
    for _ in $(seq 10); do
      curl -sf -X POST "localhost:$PORT/v2/models/translation/infer" -d "$BODY" > /dev/null
    done
    end=$(date +%s.%N)
    cold=$(curl -sf "localhost:$PORT/metrics" | awk '$1 == "sloserve_cold_starts_total" {print $2}')
    kill "$server"
    wait "$server" || true
    echo "$placement $seed 10 $(awk "BEGIN {printf \"%.2f\", $end - $start}") $cold"
  done
done
