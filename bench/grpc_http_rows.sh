#!/usr/bin/env bash
# Issue 14's performance rows in one run, on 127.0.0.1 with a zero-cost emulated model
# (executor.time_scale=0, engine.admission=off, 2 workers, fixed resnet18, input -1,16):
#   1. HTTP requests/s of `sloserve serve` beside nginx returning a fixed body for the same
#      POST (/work/shared/tools/server-vs-nginx: wrk, closed loop, 64 connections);
#   2. gRPC requests/s at p99 < 5 ms (bench/grpc_load, closed loop, concurrency 1..64: the
#      highest req/s whose p99 stays under 5 ms), and its ratio to nginx's req/s of step 1;
#   3. the added latency per hop through a remote worker at 1k req/s: grpc_load open loop
#      at 1,000/s against in-process workers, then against 2 `sloserve worker` processes
#      (same config), p50/p99 of each and the differences (target: p99 +0.5 ms at most),
#      and the CPU per request of serve and the workers (bench/grpc_hop.sh).
# Prints the rows (and one JSON line with every number at the end).
#   bench/grpc_http_rows.sh [BUILD_DIR] [SECONDS per measurement, default 10]
# Needs nginx and wrk (apt-get install nginx-light wrk) and a build with benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
bin="$build/apps/sloserve/sloserve"
load="$build/bench/grpc_load"
nginx_tool=${SERVER_VS_NGINX:-/work/shared/tools/server-vs-nginx}
for f in "$bin" "$load" "$nginx_tool"; do
  [ -x "$f" ] || { echo "grpc_http_rows: $f not found (build: ninja -C $build sloserve grpc_load)" >&2; exit 2; }
done
script=grpc_http_rows
source bench/grpc_bench_common.sh

# In-process workers: HTTP and gRPC.
# (--grpc-port 0 means no gRPC: a free port is picked here.)
grpc=$(free_port)
"$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$grpc" --duration 3600 >/dev/null 2>"$tmp/serve.log" &
pids+=($!)
wait_ready "$tmp/serve.log"
http=$(port_of "$tmp/serve.log" http)

echo "== 1. HTTP beside nginx (server-vs-nginx, ${secs} s each) =="
"$nginx_tool" "http://127.0.0.1:$http/v2/models/image/infer" "$secs" | tee "$tmp/nginx.txt"
nginx_rps=$(awk '/^nginx/{print $2}' "$tmp/nginx.txt")
http_rps=$(awk '/^server/{print $2}' "$tmp/nginx.txt")

echo "== 2. gRPC closed loop (grpc_load, ${secs} s each): best req/s with p99 < 5 ms =="
best_rps=0 best_d=0 best_p99=0
for d in 1 2 4 8 16 32 64; do
  r=$("$load" --target "127.0.0.1:$grpc" --model image --shape 1,16 --concurrency "$d" --duration "$secs")
  rps=$(field "$r" achieved_rps) p99=$(field "$r" p99_ms) errors=$(field "$r" errors)
  printf "concurrency %-3s %10s req/s  p99 %8s ms  errors %s\n" "$d" "$rps" "$p99" "$errors"
  if [ "$errors" = 0 ] && python3 -c "import sys; sys.exit(not ($p99 < 5 and $rps > $best_rps))"; then
    best_rps=$rps best_d=$d best_p99=$p99
  fi
done
grpc_ratio=$(python3 -c "print('%.3f' % ($best_rps / $nginx_rps))")
echo "gRPC at p99 < 5 ms: $best_rps req/s (concurrency $best_d, p99 $best_p99 ms);" \
  "nginx (HTTP, same run) $nginx_rps req/s: ratio $grpc_ratio"

kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
echo "== 3. added latency per hop through a remote worker, open loop 1,000 req/s, ${secs} s =="
SLOSERVE_BIN="$bin" bench/grpc_hop.sh "$build" "$secs" 1000 | tee "$tmp/hop.txt"
hop=$(tail -1 "$tmp/hop.txt")
in=$(python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["in_process"]))' "$hop")
remote=$(python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["remote"]))' "$hop")
hop_p50=$(field "$hop" hop_p50_ms) hop_p99=$(field "$hop" hop_p99_ms)
echo "{\"secs\":$secs,\"nginx_rps\":$nginx_rps,\"http_rps\":$http_rps,\"grpc_rps_p99_under_5ms\":$best_rps,\"grpc_concurrency\":$best_d,\"grpc_p99_ms\":$best_p99,\"grpc_over_nginx\":$grpc_ratio,\"in_process_1k\":$in,\"remote_1k\":$remote,\"hop_p50_ms\":$hop_p50,\"hop_p99_ms\":$hop_p99,\"load_average\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
