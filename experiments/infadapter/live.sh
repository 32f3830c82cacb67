#!/bin/bash
# Live InfAdapter (issue 12): `sloserve serve` with the infadapter planner reconfiguring
# emulated core-scaled workers (live/serve_infadapter.yaml) while `sloserve loadgen`
# replays seconds [WINDOW_START, WINDOW_END) of the bursty window in real time; then
# `sloserve sim` of the same window and config. Prints one row per run (violations, p99,
# accuracy, core-seconds, mean cores, loads) and the cores provisioned over time from
# /metrics (sloserve_core_seconds_total every 5 s) beside the simulated series.
# Real time: the window's length plus ~20 s (default 600 s = 10 minutes).
#   experiments/infadapter/live.sh
# Env: SLOSERVE (binary), PORT (default 18612), WINDOW_START/WINDOW_END (seconds of
# twitter_rps_day15_82-103min.txt; default 480..1080: 2 min steady, the spike at 600 s,
# its decrease, back to ~50 rps), OUT (default experiments/infadapter/results/live).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
PORT=${PORT:-18612}
START=${WINDOW_START:-480}
END=${WINDOW_END:-1080}
OUT=${OUT:-experiments/infadapter/results/live}
CFG=experiments/infadapter/live/serve_infadapter.yaml
TRACE=profiles/traces/twitter_rps_day15_82-103min.txt
mkdir -p "$OUT"

"$BIN" serve "$CFG" --set server.port="$PORT" --json > "$OUT/serve.json" 2> "$OUT/serve.log" &
server=$!
trap 'kill "$server" 2> /dev/null || true' EXIT
for _ in $(seq 100); do
  curl -sf "localhost:$PORT/v2/health/ready" > /dev/null 2>&1 && break
  sleep 0.1
done
# Cores provisioned: the change of sloserve_core_seconds_total over each 5 s.
(
  t0=$(date +%s.%N)
  prev_t=0
  prev_c=0
  while kill -0 "$server" 2> /dev/null; do
    sleep 5
    now=$(awk "BEGIN {print $(date +%s.%N) - $t0}")
    c=$(curl -sf "localhost:$PORT/metrics" 2> /dev/null |
      awk '$1 == "sloserve_core_seconds_total" {print $2}')
    [ -n "$c" ] || break
    awk -v t="$now" -v pt="$prev_t" -v c="$c" -v pc="$prev_c" \
      'BEGIN {printf "%.0f %.2f\n", t, (c - pc) / (t - pt)}'
    prev_t=$now
    prev_c=$c
  done
) > "$OUT/live_cores.txt" &
sampler=$!
"$BIN" loadgen --port "$PORT" --model image --arrival rps_trace --trace "$TRACE" \
  --window-start "$START" --window-end "$END" --slo-ms 750 --suite infadapter-resnet \
  --connections 256 --max-connections 2048 --timeout 600 --json > "$OUT/loadgen.json"
kill -INT "$server"
wait "$server" || true
wait "$sampler" 2> /dev/null || true
trap - EXIT

"$BIN" sim "$CFG" --set workload.arrival=rps_trace --set workload.trace=twitter_rps_day15_82-103min.txt \
  --set workload.window_start_s="$START" --set workload.window_end_s="$END" \
  --set engine.series_interval_ms=10000 --json --series > "$OUT/sim.json"
/usr/bin/python3 tools/infadapter_live_table.py "$OUT" | tee "$OUT/table.md"
