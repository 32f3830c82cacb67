#!/usr/bin/env bash
# Issue 14's performance rows in one run, on 127.0.0.1 with a zero-cost emulated model
# (executor.time_scale=0, engine.admission=off, 2 workers, fixed resnet18, input -1,16):
#   1. HTTP requests/s of `sloserve serve` beside nginx returning a fixed body for the same
#      POST (/work/shared/tools/server-vs-nginx: wrk, closed loop, 64 connections);
#   2. gRPC requests/s at p99 < 5 ms (bench/grpc_load, closed loop, concurrency 1..64: the
#      highest req/s whose p99 stays under 5 ms), and its ratio to nginx's req/s of step 1;
#   3. the added latency per hop through a remote worker at 1k req/s: grpc_load open loop
#      at 1,000/s against in-process workers, then against 2 `sloserve worker` processes
#      (same config), p50/p99 of each and the differences (target: p99 +0.5 ms at most).
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
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/rows.yaml" <<'EOF'
suite: ramsis-image
task: image
hardware: n1-4cpu
workers: 2
slo_ms: 1000
seed: 1
executor: {latency: sample, time_scale: 0}
engine: {admission: off}
policy: {name: fixed, dispatch: round_robin, batching: edf, selection: fixed, variant: resnet18}
server: {input_shape: "-1,16"}
EOF

# Waits for "listening on SCHEME://127.0.0.1:PORT" in log $1 and prints PORT.
port_of() {
  for _ in $(seq 100); do
    if p=$(grep -o "$2://127.0.0.1:[0-9]*" "$1" | head -1 | sed 's/.*://') && [ -n "$p" ]; then
      echo "$p"
      return
    fi
    sleep 0.1
  done
  echo "grpc_http_rows: no $2 port in $1:" >&2
  cat "$1" >&2
  exit 1
}
wait_ready() {
  for _ in $(seq 300); do grep -q "sloserve: ready" "$1" && return; sleep 0.1; done
  echo "grpc_http_rows: not ready: $(cat "$1")" >&2
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

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

echo "== 3. added latency per hop through a remote worker, open loop 1,000 req/s, ${secs} s =="
in=$("$load" --target "127.0.0.1:$grpc" --model image --shape 1,16 --rate 1000 --duration "$secs")
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
workers=()
for k in 0 1; do
  "$bin" worker "$tmp/rows.yaml" --listen 127.0.0.1:0 --duration 3600 >/dev/null 2>"$tmp/worker$k.log" &
  pids+=($!)
  workers+=(--remote-worker "127.0.0.1:$(port_of "$tmp/worker$k.log" grpc)")
done
rgrpc=$(free_port)
"$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$rgrpc" --duration 3600 "${workers[@]}" \
  >/dev/null 2>"$tmp/remote.log" &
pids+=($!)
wait_ready "$tmp/remote.log"
remote=$("$load" --target "127.0.0.1:$rgrpc" --model image --shape 1,16 --rate 1000 --duration "$secs")
printf "in-process  %8s req/s  p50 %7s ms  p99 %7s ms  errors %s\n" "$(field "$in" achieved_rps)" \
  "$(field "$in" p50_ms)" "$(field "$in" p99_ms)" "$(field "$in" errors)"
printf "remote      %8s req/s  p50 %7s ms  p99 %7s ms  errors %s\n" "$(field "$remote" achieved_rps)" \
  "$(field "$remote" p50_ms)" "$(field "$remote" p99_ms)" "$(field "$remote" errors)"
hop_p50=$(python3 -c "print('%.3f' % ($(field "$remote" p50_ms) - $(field "$in" p50_ms)))")
hop_p99=$(python3 -c "print('%.3f' % ($(field "$remote" p99_ms) - $(field "$in" p99_ms)))")
echo "added per hop: p50 +$hop_p50 ms, p99 +$hop_p99 ms (target p99 <= 0.5 ms)"
echo "{\"secs\":$secs,\"nginx_rps\":$nginx_rps,\"http_rps\":$http_rps,\"grpc_rps_p99_under_5ms\":$best_rps,\"grpc_concurrency\":$best_d,\"grpc_p99_ms\":$best_p99,\"grpc_over_nginx\":$grpc_ratio,\"in_process_1k\":$in,\"remote_1k\":$remote,\"hop_p50_ms\":$hop_p50,\"hop_p99_ms\":$hop_p99,\"load_average\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
