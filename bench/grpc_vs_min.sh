#!/usr/bin/env bash
# Issue 35's gRPC rows: `sloserve serve`'s ModelInfer (zero-cost emulated model, in-process
# workers: bench/grpc_bench_common.sh's config) against bench/grpc_min_server (a minimal
# async C++ gRPC server answering the same call with a fixed reply: gRPC's own cost), both
# closed loop with bench/grpc_load at the same concurrency, alternating ROUNDS times so the
# machine's load falls on both alike. Targets: serve >= 0.7 of the minimal server's
# requests/s, p99 <= its p99 + 1 ms. Prints a line per round and the medians.
#   bench/grpc_vs_min.sh [BUILD_DIR] [SECONDS] [ROUNDS] [CONCURRENCY]
#   bench/grpc_vs_min.sh build 6 3 32
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-6}
rounds=${3:-3}
conc=${4:-32}
bin="$build/apps/sloserve/sloserve"
load="$build/bench/grpc_load"
minsrv="$build/bench/grpc_min_server"
for f in "$bin" "$load" "$minsrv"; do
  [ -x "$f" ] || { echo "grpc_vs_min: $f not found (ninja -C $build sloserve grpc_load grpc_min_server)" >&2; exit 2; }
done
script=grpc_vs_min
source bench/grpc_bench_common.sh

"$minsrv" --port 0 2>"$tmp/min.log" &
pids+=($!)
min_port=$(port_of "$tmp/min.log" grpc)
serve_port=$(free_port)
"$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$serve_port" --duration 3600 >/dev/null \
  2>"$tmp/serve.log" &
pids+=($!)
wait_ready "$tmp/serve.log"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); concurrency $conc, ${secs} s per run"
for r in $(seq "$rounds"); do
  for who in min serve; do
    p=$min_port
    [ "$who" = serve ] && p=$serve_port
    "$load" --target "127.0.0.1:$p" --concurrency "$conc" --duration "$secs" >"$tmp/$who.$r.json"
  done
  python3 - "$tmp/min.$r.json" "$tmp/serve.$r.json" "$r" <<'PY'
import json, sys
m, s = (json.load(open(f)) for f in sys.argv[1:3])
for name, r in (("minimal", m), ("serve", s)):
    if r["errors"] or not r["requests"]:
        sys.exit("grpc_vs_min: %s: %d errors, %d answers" % (name, r["errors"], r["requests"]))
print("round %s: minimal %.0f req/s p99 %.2f ms | serve %.0f req/s p99 %.2f ms | ratio %.3f, p99 +%.2f ms"
      % (sys.argv[3], m["achieved_rps"], m["p99_ms"], s["achieved_rps"], s["p99_ms"], s["achieved_rps"] / m["achieved_rps"], s["p99_ms"] - m["p99_ms"]))
PY
done
