#!/bin/bash
# Live model-aware placement through `sloserve serve` with the engine's placements of the
# thesis' policies, driven by `sloserve loadgen` (docs/model-aware.md, "Live"):
#   section 6.2: 10 t5-small requests 4.5 s apart (each finds the previous one answered,
#     as the thesis' sequential requests), placements random, colocation, adaptive;
#   section 6.4.2 (Table 6.2): a warming request, then two 50 ms apart while the first of
#     them runs, placements colocation, colocation_queue, registry, adaptive.
# 8 emulated c220g5 workers, two to a machine (live/serve_cluster.yaml), no model resident
# at start; cold starts read from /metrics. Prints one line per run. Real time: ~3.5 min.
#   experiments/model-aware/live.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), PORT (default 18614), SEED.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
PORT=${PORT:-18614}
SEED=${SEED:-1}
LG=("$BIN" loadgen --port "$PORT" --model translation --datatype BYTES --shape 1
  --arrival constant --json)

start_server() {
  "$BIN" serve experiments/model-aware/live/serve_cluster.yaml --set server.port="$PORT" \
    --set seed="$SEED" --set policy.placement="$1" > /dev/null 2>&1 &
  server=$!
  for _ in $(seq 100); do
    curl -sf "localhost:$PORT/v2/health/ready" > /dev/null 2>&1 && return
    sleep 0.1
  done
  echo "server did not become ready" >&2
  exit 1
}
stop_server() {
  kill "$server"
  wait "$server" || true
}
cold_starts() {
  curl -sf "localhost:$PORT/metrics" | awk '$1 == "sloserve_cold_starts_total" {print $2}'
}
# ok, mean and max latency (s) of a loadgen JSON report
summary() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["latency_ms"]
print(d["ok"], "%.3f" % (l["mean"] / 1e3), "%.3f" % (l["max"] / 1e3))'
}

echo "workload placement ok sum_latency_s cold_starts"
for placement in random colocation adaptive; do
  start_server "$placement"
  # constant at 1/4.5 qps: arrivals at 4.5, 9, ..., 45 s (10 requests)
  read -r ok mean _ < <("${LG[@]}" --qps 0.2222222 --duration 45.2 | summary)
  echo "sec6.2 $placement $ok $(awk "BEGIN {printf \"%.2f\", $ok * $mean}") $(cold_starts)"
  stop_server
done

echo "workload placement ok end_to_end_s cold_starts"
for placement in colocation colocation_queue registry adaptive; do
  start_server "$placement"
  read -r ok1 mean1 _ < <("${LG[@]}" --qps 10 --duration 0.15 | summary)  # one at 0.1 s
  read -r ok2 _ max2 < <("${LG[@]}" --qps 20 --duration 0.12 | summary)   # at 0.05, 0.1 s
  # the thesis' end-to-end: the warming request, then the later of the two (which the
  # second one's 50 ms offset makes at most 0.05 s longer than simultaneous arrivals)
  echo "sec6.4.2 $placement $((ok1 + ok2)) $(awk "BEGIN {printf \"%.2f\", $mean1 + $max2 + 0.05}") $(cold_starts)"
  stop_server
done
