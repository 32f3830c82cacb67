#!/usr/bin/env bash
# CPU and context switches per request at light and moderate load (issue 38), for serve
# and for the anchors that show the transport's own cost, back to back in one run so the
# ratios are comparable on a shared machine:
#   nginx        nginx-light returning a fixed KServe-shaped body (the HTTP anchor,
#                ../shared/tools/nginx-baseline.conf's server, on its own port and pid file)
#   http         `sloserve serve` over HTTP, driven by `sloserve loadgen --qps`
#   grpc-min     bench/grpc_min_server (a minimal async C++ gRPC server: the gRPC anchor)
#   grpc         serve over gRPC with in-process workers, driven by bench/grpc_load --rate
#   grpc-remote  serve over gRPC with 2 `sloserve worker` processes (serve + workers' CPU)
#   grpc-remote-tcp  grpc-remote with the Runs on the workers' TCP Run channel
#                (`worker --run-port 0`, server.worker_run_transport=tcp; docs/remote-workers.md)
#   http-remote  serve over HTTP only (no gRPC port) with 2 `sloserve worker` processes;
#                not in the default TARGETS (the issue sets no target for it)
#   http-remote-tcp  http-remote with the Runs on the TCP Run channel (not in the default)
# Every serve runs the zero-cost emulated model of bench/grpc_bench_common.sh
# (executor.time_scale=0, 2 workers, admission off), so what is measured is the server.
# Open loop at each RATE; for each target: CPU per answered request (on-CPU time of every
# thread of every process of the target over the run / answered requests: schedstat's
# nanoseconds, and utime+stime from /proc/PID/stat as cpu_us_per_req_ticks) and context
# switches per request (voluntary + involuntary, summed over every thread from
# /proc/PID/task/*/status). Prints a table (of_which_1st: the CPU of the target's first
# process alone: for grpc-remote, serve without its workers), the ratios the issue sets
# targets for, and with --json one JSON object.
#   bench/cpu_per_request.sh [--json] [BUILD_DIR] [SECONDS, default 5] [RATES, default "100 1000 10000"]
# TARGETS="http nginx" runs a subset; SLOSERVE_BIN=path runs another sloserve binary;
# ROUNDS=N (default 1) measures every target N times at each rate, the targets taking turns
# round by round, and reports each round's ratio and their median (one 5 s run of a
# target moves by up to 30% on a shared VM: the median of several is the number to quote).
# Needs nginx (scripts/setup --bench-packages installs nginx-light); the ratios are the point:
# CPU numbers move with whatever else runs on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
json=0
if [ "${1:-}" = --json ]; then json=1; shift; fi
build=${1:-build}
secs=${2:-5}
rates=${3:-"100 1000 10000"}
rounds=${ROUNDS:-1}
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "cpu_per_request: ROUNDS must be 1..99, not '$rounds'" >&2; exit 2; }
targets=${TARGETS:-"nginx http grpc-min grpc grpc-remote grpc-remote-tcp"}
bin=${SLOSERVE_BIN:-$build/apps/sloserve/sloserve}
load="$build/bench/grpc_load"
minsrv="$build/bench/grpc_min_server"
for f in "$bin" "$load" "$minsrv"; do
  [ -x "$f" ] || {
    echo "cpu_per_request: $f not found (build: ninja -C $build sloserve grpc_load grpc_min_server)" >&2
    exit 2
  }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
script=cpu_per_request
source bench/grpc_bench_common.sh
say() { [ "$json" = 1 ] || echo "$@"; }

# Every pid of the processes given and their children (nginx's workers).
family() { for p in "$@"; do echo "$p"; pgrep -P "$p" || true; done; }
ticks() {
  local t=0
  for p in $(family "$@"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
# On-CPU nanoseconds of every thread (/proc/PID/task/*/schedstat: the same time as
# utime+stime, without their 10 ms ticks, which at 100 req/s x 5 s would be 20 us a request).
cpu_ns() {
  local p
  for p in $(family "$@"); do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
    awk '{s += $1} END {printf "%.0f\n", s}'
}
switches() {
  local t=0 p
  for p in $(family "$@"); do
    t=$((t + $(cat /proc/"$p"/task/*/status 2>/dev/null |
      awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s + 0}')))
  done
  echo "$t"
}
hz=$(getconf CLK_TCK)

# Start every target once; idle they cost nothing (checked below), so they stay up.
declare -A procs port kind
has() { [[ " $targets " == *" $1 "* ]]; }
if has nginx; then
  [ -x "$nginx_bin" ] || { echo "cpu_per_request: nginx not found (apt-get install nginx-light)" >&2; exit 2; }
  nport=$(free_port)
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx.conf" <<EOF
worker_processes auto;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nport;
    location / {
      default_type application/json;
      return 200 '{"model_name":"image","outputs":[{"name":"out","shape":[1],"datatype":"FP32","data":[0.0]}]}';
    }
  }
}
EOF
  "$nginx_bin" -p "$tmp/nginx" -c "$tmp/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx.log" &
  pids+=($!)
  procs[nginx]=$!
  port[nginx]=$nport
  kind[nginx]=http
fi
if has http; then
  "$bin" serve "$tmp/rows.yaml" --port 0 --duration 3600 >/dev/null 2>"$tmp/http.log" &
  pids+=($!)
  procs[http]=$!
  port[http]=$(port_of "$tmp/http.log" http)
  kind[http]=http
  wait_ready "$tmp/http.log"
fi
if has grpc-min; then
  "$minsrv" --port 0 2>"$tmp/min.log" &
  pids+=($!)
  procs[grpc-min]=$!
  port[grpc-min]=$(port_of "$tmp/min.log" grpc)
  kind[grpc-min]=grpc
fi
if has grpc; then
  g=$(free_port)
  "$bin" serve "$tmp/rows.yaml" --port 0 --grpc-port "$g" --duration 3600 >/dev/null \
    2>"$tmp/grpc.log" &
  pids+=($!)
  procs[grpc]=$!
  port[grpc]=$g
  kind[grpc]=grpc
  wait_ready "$tmp/grpc.log"
fi
# Serve with 2 `sloserve worker` processes as target $1 (its processes: serve, then the
# workers); $2 = http (HTTP only) or grpc (a gRPC port, the clients' protocol); $3 = tcp:
# the Runs on the workers' TCP Run channel.
start_remote() {
  local t=$1 proto=$2 k g
  local remote_workers=() worker_pids=() listen=(--port 0) run=()
  if [ "${3:-}" = tcp ]; then
    run=(--run-port 0)
    listen+=(--set server.worker_run_transport=tcp)
  fi
  for k in 0 1; do
    "$bin" worker "$tmp/rows.yaml" --listen 127.0.0.1:0 "${run[@]}" --duration 3600 >/dev/null \
      2>"$tmp/$t-worker$k.log" &
    pids+=($!)
    worker_pids+=($!)
    remote_workers+=(--remote-worker "127.0.0.1:$(port_of "$tmp/$t-worker$k.log" grpc)")
  done
  if [ "$proto" = grpc ]; then
    g=$(free_port)
    listen+=(--grpc-port "$g")
  fi
  "$bin" serve "$tmp/rows.yaml" "${listen[@]}" --duration 3600 "${remote_workers[@]}" \
    >/dev/null 2>"$tmp/$t.log" &
  pids+=($!)
  procs[$t]="$! ${worker_pids[*]}"
  if [ "$proto" = grpc ]; then port[$t]=$g; else port[$t]=$(port_of "$tmp/$t.log" http); fi
  kind[$t]=$proto
  wait_ready "$tmp/$t.log"
}
if has grpc-remote; then start_remote grpc-remote grpc; fi
if has grpc-remote-tcp; then start_remote grpc-remote-tcp grpc tcp; fi
if has http-remote; then start_remote http-remote http; fi
if has http-remote-tcp; then start_remote http-remote-tcp http tcp; fi
sleep 1
all=""
for t in $targets; do all="$all ${procs[$t]}"; done
# shellcheck disable=SC2086
i0=$(ticks $all)
sleep 2
# shellcheck disable=SC2086
idle=$(( $(ticks $all) - i0 ))
say "idle: $idle ticks in 2 s for all targets together (1 tick = $((1000000 / hz)) us)"

# One measurement: prints {"target", "rate", "round", "answered", "achieved_rps", "p50_ms",
# "p99_ms", "cpu_us_per_req", "switches_per_req"}.
measure() {
  local t=$1 rate=$2 round=$3 c0 s0 n0 c1 s1 n1 m0 m1 r
  # shellcheck disable=SC2086
  set -- ${procs[$t]}  # the first process is the server (for grpc-remote: serve, then workers)
  c0=$(ticks "$@") s0=$(switches "$@") n0=$(cpu_ns "$@") m0=$(cpu_ns "$1")
  if [ "${kind[$t]}" = http ]; then
    r=$("$bin" loadgen --port "${port[$t]}" --model image --qps "$rate" --duration "$secs" \
      --connections 64 --max-connections 1024 --json 2>/dev/null)
  else
    r=$("$load" --target "127.0.0.1:${port[$t]}" --model image --shape 1,16 --rate "$rate" \
      --duration "$secs")
  fi
  # shellcheck disable=SC2086
  c1=$(ticks "$@") s1=$(switches "$@") n1=$(cpu_ns "$@") m1=$(cpu_ns "$1")
  python3 -c '
import json, sys
t, rate, hz, c0, c1, s0, s1, n0, n1, m0, m1, rnd = sys.argv[2], float(sys.argv[3]), *map(int, sys.argv[4:14])
r = json.loads(sys.argv[1])
if "ok" in r:  # sloserve loadgen
    n, lat = r["ok"], r.get("latency_ms", {})
    p50, p99 = lat.get("p50", r.get("latency_p50_ms")), lat.get("p99", r.get("latency_p99_ms"))
    rps = r["achieved_qps"]
else:  # grpc_load
    n, p50, p99, rps = r["requests"], r["p50_ms"], r["p99_ms"], r["achieved_rps"]
m = max(1, n)
print(json.dumps({"target": t, "rate": rate, "round": rnd, "answered": n, "achieved_rps": round(rps, 1),
                  "p50_ms": p50, "p99_ms": p99,
                  "cpu_us_per_req": round((n1 - n0) / 1e3 / m, 1),
                  "cpu_us_per_req_ticks": round((c1 - c0) * 1e6 / hz / m, 1),
                  "cpu_us_per_req_first": round((m1 - m0) / 1e3 / m, 1),
                  "switches_per_req": round((s1 - s0) / m, 2)}))' \
    "$r" "$t" "$rate" "$hz" "$c0" "$c1" "$s0" "$s1" "$n0" "$n1" "$m0" "$m1" "$round"
}

rows=()
say "$(printf "%-15s %7s %9s %10s %9s %9s %12s %12s %12s" target rate answered achieved p50_ms p99_ms cpu_us/req of_which_1st switches/req)"
for rate in $rates; do
  for round in $(seq "$rounds"); do
  for t in $targets; do
    row=$(measure "$t" "$rate" "$round")
    rows+=("$row")
    [ "$json" = 1 ] || python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("%-15s %7d %9d %10.0f %9.3f %9.3f %12.1f %12.1f %12.2f" % (r["target"], r["rate"], r["answered"],
      r["achieved_rps"], r["p50_ms"], r["p99_ms"], r["cpu_us_per_req"], r["cpu_us_per_req_first"],
      r["switches_per_req"]))' "$row"
  done
  done
done
python3 -c '
import json, statistics, sys
as_json = sys.argv[1] == "1"
rows = [json.loads(r) for r in sys.argv[3:]]
cpu = {(r["target"], r["rate"], r["round"]): r["cpu_us_per_req"] for r in rows}
rounds = sorted({r["round"] for r in rows})
ratios = []
for (num, den, what) in (("http", "nginx", "HTTP serve / nginx (target <= 2 at 1,000, <= 1.5 at 10,000)"),
                         ("grpc", "grpc-min", "gRPC serve / minimal gRPC server (target <= 2 at 1,000)"),
                         ("grpc-remote", "grpc", "remote hop serve+workers / serve in-process (target <= 2)"),
                         ("grpc-remote-tcp", "grpc", "remote hop, TCP Run channel / serve in-process (target <= 2)"),
                         ("http-remote", "http", "HTTP remote hop serve+workers / serve in-process (no target)"),
                         ("http-remote-tcp", "http", "HTTP remote hop, TCP Run channel / serve in-process (no target)")):
    for rate in sorted({r["rate"] for r in rows}):
        each = []
        for k in rounds:
            a, b = cpu.get((num, rate, k)), cpu.get((den, rate, k))
            if a is not None and b:
                each.append(round(a / b, 2))
        if each:
            ratios.append({"what": what, "rate": rate, "ratio": round(statistics.median(each), 2),
                           "rounds": each})
if as_json:
    print(json.dumps({"secs": float(sys.argv[2]), "rows": rows, "ratios": ratios,
                      "load_average": open("/proc/loadavg").read().split()[:3]}))
else:
    print("CPU per request ratios" + (" (median of the rounds; each round in brackets):" if len(rounds) > 1 else ":"))
    for r in ratios:
        each = " (" + " / ".join("%.2f" % x for x in r["rounds"]) + ")" if len(r["rounds"]) > 1 else ""
        print("  %-62s at %6d req/s: %5.2f%s" % (r["what"], r["rate"], r["ratio"], each))
' "$json" "$secs" "${rows[@]}"
