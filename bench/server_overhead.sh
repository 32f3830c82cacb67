#!/usr/bin/env bash
# Server overhead: requests/s and added latency of `sloserve serve` with a zero-duration
# emulated variant (executor.time_scale=0, so every millisecond measured is the server's
# own HTTP + JSON + engine overhead), driven by `sloserve loadgen` in a second process on
# 127.0.0.1 at 1k, 5k and 10k requests/s offered (Poisson), 10 s each.
#   bench/server_overhead.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
bin="$build/apps/sloserve/sloserve"
log=$(mktemp)
"$bin" serve --port 0 --set executor.time_scale=0 --set workers=8 --json >/dev/null 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
printf "%-10s %-12s %-10s %-10s %-10s %-10s\n" offered achieved ok p50_ms p99_ms max_ms
for qps in 1000 5000 10000; do
  "$bin" loadgen --port "$port" --model image --qps "$qps" --duration "$secs" --connections 128 \
    --max-connections 1024 --json |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("%-10s %-12.0f %-10d %-10.2f %-10.2f %-10.2f" % (sys.argv[1], r["achieved_qps"], r["ok"], r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["latency_ms"]["max"]))' "$qps"
done
