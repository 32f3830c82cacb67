#!/usr/bin/env bash
# The added latency per hop through a remote worker (issue 14's row "added p99 per hop
# <= 0.5 ms at 1k req/s"), and the CPU it costs, on 127.0.0.1 with a zero-cost emulated
# model (the config of bench/grpc_http_rows.sh): grpc_load open loop at RATE/s against
# `sloserve serve` with in-process workers, then against serve + 2 `sloserve worker`
# processes; p50/p99 of each, their differences, and the CPU time (user+sys, from
# /proc/PID/stat) of serve and of the workers per request during the measurement, which
# is steadier than a tail on a shared machine, and serve's voluntary context switches
# (thread wake-ups) per request. Prints the rows and one JSON line.
#   bench/grpc_hop.sh [BUILD_DIR] [SECONDS, default 10] [RATE, default 1000]
# SLOSERVE_BIN=path runs another sloserve binary (a before/after comparison).
# HOP_WORKERS=kserve makes the two workers `sloserve serve --grpc-port` processes driven
# through the KServe adapter (server.kserve_workers: one ModelInfer per batch) instead of
# `sloserve worker` processes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
rate=${3:-1000}
bin=${SLOSERVE_BIN:-$build/apps/sloserve/sloserve}
load="$build/bench/grpc_load"
for f in "$bin" "$load"; do
  [ -x "$f" ] || { echo "grpc_hop: $f not found (build: ninja -C $build sloserve grpc_load)" >&2; exit 2; }
done
script=grpc_hop
source bench/grpc_bench_common.sh
# CPU ticks (user+sys) of the processes given.
ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
# Voluntary context switches (a thread going to sleep: about its wake-ups) summed over
# every thread of the processes given.
switches() {
  local t=0
  for p in "$@"; do
    t=$((t + $(cat /proc/"$p"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}')))
  done
  echo "$t"
}
hz=$(getconf CLK_TCK)
# Runs grpc_load against port $1 and prints its JSON with "cpu_us_per_req_serve",
# "cpu_us_per_req_workers" and "switches_per_req_serve" (voluntary context switches of all
# of serve's threads per request) added (serve's pid $2, the workers' pids after it).
measure() {
  local port=$1 serve=$2
  shift 2
  local s0 w0 c0 r s1 w1 c1
  s0=$(ticks "$serve") w0=$(ticks "$@") c0=$(switches "$serve")
  r=$("$load" --target "127.0.0.1:$port" --model image --shape 1,16 --rate "$rate" --duration "$secs")
  s1=$(ticks "$serve") w1=$(ticks "$@") c1=$(switches "$serve")
  python3 -c '
import json, sys
r = json.loads(sys.argv[1]); n = max(1, r["requests"]); hz = int(sys.argv[2])
r["cpu_us_per_req_serve"] = round((int(sys.argv[4]) - int(sys.argv[3])) * 1e6 / hz / n, 1)
r["cpu_us_per_req_workers"] = round((int(sys.argv[6]) - int(sys.argv[5])) * 1e6 / hz / n, 1)
r["switches_per_req_serve"] = round((int(sys.argv[8]) - int(sys.argv[7])) / n, 2)
print(json.dumps(r))' "$r" "$hz" "$s0" "$s1" "$w0" "$w1" "$c0" "$c1"
}

grpc=$(free_port)
"$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$grpc" --duration 3600 >/dev/null 2>"$tmp/serve.log" &
pids+=($!)
wait_ready "$tmp/serve.log"
in=$(measure "$grpc" "${pids[0]}")
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
workers=()
kind=${HOP_WORKERS:-worker}
case "$kind" in
  worker)
    for k in 0 1; do
      "$bin" worker "$tmp/rows.yaml" --listen 127.0.0.1:0 --duration 3600 >/dev/null \
        2>"$tmp/worker$k.log" &
      pids+=($!)
      workers+=(--remote-worker "127.0.0.1:$(port_of "$tmp/worker$k.log" grpc)")
    done
    ;;
  kserve)
    backs=()
    for k in 0 1; do
      back=$(free_port)
      "$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$back" --duration 3600 >/dev/null \
        2>"$tmp/worker$k.log" &
      pids+=($!)
      wait_ready "$tmp/worker$k.log"
      backs+=("127.0.0.1:$back")
    done
    workers+=(--set "server.kserve_workers=${backs[0]},${backs[1]}" --set server.kserve_model=image)
    ;;
  *) echo "grpc_hop: HOP_WORKERS is worker or kserve, not '$kind'" >&2; exit 2 ;;
esac
rgrpc=$(free_port)
"$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$rgrpc" --duration 3600 "${workers[@]}" \
  >/dev/null 2>"$tmp/remote.log" &
pids+=($!)
wait_ready "$tmp/remote.log"
remote=$(measure "$rgrpc" "${pids[2]}" "${pids[0]}" "${pids[1]}")
for row in in-process remote; do
  r=$in
  [ "$row" = remote ] && r=$remote
  printf "%-11s %8s req/s  p50 %7s ms  p99 %7s ms  errors %s  CPU/req serve %6s us, workers %6s us  serve switches/req %s\n" \
    "$row" "$(field "$r" achieved_rps)" "$(field "$r" p50_ms)" "$(field "$r" p99_ms)" \
    "$(field "$r" errors)" "$(field "$r" cpu_us_per_req_serve)" "$(field "$r" cpu_us_per_req_workers)" \
    "$(field "$r" switches_per_req_serve)"
done
hop_p50=$(python3 -c "print('%.3f' % ($(field "$remote" p50_ms) - $(field "$in" p50_ms)))")
hop_p99=$(python3 -c "print('%.3f' % ($(field "$remote" p99_ms) - $(field "$in" p99_ms)))")
echo "added per hop at $rate req/s: p50 +$hop_p50 ms, p99 +$hop_p99 ms (target p99 <= 0.5 ms)"
echo "{\"secs\":$secs,\"rate\":$rate,\"in_process\":$in,\"remote\":$remote,\"hop_p50_ms\":$hop_p50,\"hop_p99_ms\":$hop_p99,\"load_average\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
