#!/usr/bin/env bash
# ORLOJ Figure 14, live: scale every execution time (and the SLO, and the arrival rate by
# the inverse) down until the finish rate drops. In `sim` this changes nothing (decisions
# take no virtual time); here `sloserve serve` runs the policies on a real engine thread,
# so their decision cost, the engine thread's wake-ups and the HTTP path become
# comparable to the execution times as the scale shrinks. See docs/orloj.md "Figure 14".
#
#   experiments/orloj/fig14_time_scale.sh [OUT_DIR]      (from any directory)
#
# Per time scale s, per policy, per SLO multiple x:
#   - the Figure 8c profile (experiments/orloj/profiles/modes3.prof: modes 40/70/100 ms,
#     std 10 ms, lat(k) = 50 + 20 k ms) with every time multiplied by s
#     (scale_profile.py), so the executor AND the policies see the scaled model;
#   - `sloserve serve experiments/orloj/fig14_serve.yaml` on 127.0.0.1, a free port,
#     slo_ms = x * 118.8 ms * s (118.8 ms = P99 of the pooled execution time alone),
#     orloj's b = 1e-4 / s per ms (the same shape of score in scaled time);
#   - three `sloserve loadgen` processes, one per app (app0..app2, equally likely as in
#     the simulator), Gamma CV 3 arrivals, each at LOAD_QPS / s / 3 req/s, DURATION s;
#     seeds fixed, so every policy sees the same arrivals and every scale the same
#     arrival pattern in scaled time;
#   - finish rate = answered with met_slo / sent (server side: engine admission to
#     batch completion), summed over the three loadgens; the client-side rate (HTTP
#     round trip included) and the server's own metrics are kept in the JSON.
# The total rate is capped at CAP_FRACTION of the server's maximum rate, measured first
# with a zero-duration executor (executor.time_scale=0, as bench/server_overhead.sh);
# a capped row runs at a lower utilisation than the others and is marked.
#
# Environment (defaults):
#   SLOSERVE      build/apps/sloserve/sloserve
#   SCALES        "1 0.3 0.1 0.03 0.01 0.003 0.001"
#   POLICIES      "orloj clockwork nexus"   (any of orloj clockwork nexus clipper; clipper
#                 never drops, so its backlog makes its runs long)
#   SLO_X         "1.5 3 5"                 (multiples of P99)
#   DURATION      8       seconds of arrivals per run ...
#   MIN_REQUESTS  400     ... lengthened where fewer would be sent (scale 1: 16 s)
#   LOAD_QPS      25      total arrival rate at scale 1 (the Table 2 / Figure 8 load)
#   CAP_FRACTION  0.6     of the measured maximum rate
#   MAX_QPS       (measure)  skip the measurement and use this maximum
#   SEED          1       loadgen seeds SEED, SEED+1, SEED+2
# Output: OUT_DIR (default experiments/orloj/results/fig14-live): fig14.json (summary:
# settings, machine load, one row per run), fig14.md (the table), max_*.json, and
# runs/ (per run: TAG.row.json with the loadgen reports and server metrics, raw files)
# and profiles/ (the scaled profiles), both deleted and rewritten on every invocation.
# About 11 minutes with the defaults on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$(realpath "${SLOSERVE:-$root/build/apps/sloserve/sloserve}")
out=$(mkdir -p "${1:-$here/results/fig14-live}" && cd "${1:-$here/results/fig14-live}" && pwd)
scales=${SCALES:-"1 0.3 0.1 0.03 0.01 0.003 0.001"}
policies=${POLICIES:-"orloj clockwork nexus"}
slo_x=${SLO_X:-"1.5 3 5"}
duration=${DURATION:-8}
min_requests=${MIN_REQUESTS:-400}
load_qps=${LOAD_QPS:-25}
cap_fraction=${CAP_FRACTION:-0.6}
seed=${SEED:-1}
p99_ms=118.8
config="$here/fig14_serve.yaml"
[ -x "$bin" ] || { echo "no sloserve binary at $bin (set SLOSERVE)" >&2; exit 1; }
# Run a private copy: the build tree may be relinked while the script runs.
tmp=$(mktemp -d)
cp "$bin" "$tmp/sloserve"
"$tmp/sloserve" --help >/dev/null || { echo "$bin does not run" >&2; exit 1; }
bin_src=$bin
bin=$tmp/sloserve
rm -rf "$out/runs" "$out/profiles"  # this script's own subdirectories: no stale runs
mkdir -p "$out/runs" "$out/profiles"
calc() { python3 -c "print(repr(float($1)))"; }

server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# start_server LOG JSON ARGS... : starts serve, sets server_pid and port
start_server() {
  local log=$1 json=$2
  shift 2
  : >"$log"
  "$bin" serve "$config" --port 0 --json "$@" >"$json" 2>"$log" &
  server_pid=$!
  for _ in $(seq 300); do
    grep -q "listening on" "$log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  port=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
  [ -n "$port" ] || { cat "$log" >&2; exit 1; }
}
stop_server() {
  kill -INT "$server_pid"
  wait "$server_pid" || true
  server_pid=
}
# CPU seconds (user + system) of a process (or /proc/PID/task/TID) so far
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
# The engine thread: serve starts the runtime before the HTTP server, so it is the first
# thread after the main one (a heuristic; it holds while no other thread starts first).
engine_tid() {
  local t
  for t in "/proc/$1/task/"*; do echo "${t##*/}"; done | sort -n | grep -vx "$1" | head -1
}

echo "fig14: binary $bin_src (copied to $bin), output $out" >&2
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "fig14: $(nproc) cores, load average $load_start at start" >&2

# 1. The server's maximum rate: zero-duration executor, one loadgen offering more than
#    it can take; the achieved rate is the saturation throughput.
if [ -n "${MAX_QPS:-}" ]; then
  max_qps=$MAX_QPS
  echo "fig14: maximum rate $max_qps req/s (MAX_QPS)" >&2
else
  start_server "$out/max.log" "$out/max_server.json" --set executor.time_scale=0 \
    --set policy.name=clockwork --set policy.batching=clockwork
  max_qps=0
  for q in 20000 40000; do
    "$bin" loadgen --port "$port" --model generate --shape 1 --qps "$q" --duration 3 \
      --connections 128 --max-connections 1024 --json >"$out/max_$q.json"
    a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["achieved_qps"])' "$out/max_$q.json")
    max_qps=$(python3 -c "print(max($max_qps, $a))")
  done
  stop_server
  echo "fig14: maximum rate $max_qps req/s (zero-duration executor, 1 loadgen)" >&2
fi
cap_qps=$(calc "$cap_fraction * $max_qps")

# 2. The runs.
start=$(date +%s)
for s in $scales; do
  prof="$out/profiles/modes3-x$s.prof"
  python3 "$here/scale_profile.py" "$here/profiles/modes3.prof" "$s" "$prof"
  want=$(calc "$load_qps / $s")
  rate=$(python3 -c "print(min($want, $cap_qps))")
  secs=$(python3 -c "print(max($duration, $min_requests / $rate))")
  for p in $policies; do
    for x in $slo_x; do
      slo=$(python3 -c "print(round($x * $p99_ms * $s, 4))")
      tag="s${s}_${p}_x${x}"
      extra=()
      [ "$p" = orloj ] && extra=(--set "policy.b=$(calc "1e-4 / $s")")
      load_before=$(cut -d' ' -f1 /proc/loadavg)
      start_server "$out/runs/$tag.log" "$out/runs/$tag.server.json" \
        --set "suite=$prof" --set "slo_ms=$slo" --set "policy.name=$p" \
        --set "policy.batching=$p" "${extra[@]}"
      cpu0=$(cpu_s "$server_pid")
      etid=$(engine_tid "$server_pid")
      ecpu0=$(cpu_s "$server_pid/task/$etid")
      lg=()
      for i in 0 1 2; do
        "$bin" loadgen --port "$port" --model generate --shape 1 --app "app$i" \
          --slo-ms "$slo" --arrival gamma --cv 3 --qps "$(calc "$rate / 3")" \
          --duration "$secs" --seed $((seed + i)) --connections 32 \
          --max-connections 1024 --timeout 30 --json >"$out/runs/$tag.app$i.json" &
        lg+=($!)
      done
      for pid in "${lg[@]}"; do wait "$pid"; done
      cpu1=$(cpu_s "$server_pid")
      ecpu1=$(cpu_s "$server_pid/task/$etid")
      stop_server
      python3 - "$out/runs" "$tag" "$s" "$p" "$x" "$slo" "$want" "$rate" "$cpu0" "$cpu1" \
        "$load_before" "$secs" "$ecpu0" "$ecpu1" <<'EOF'
import json, sys
d, tag, s, p, x, slo, want, rate, cpu0, cpu1, load, secs, ecpu0, ecpu1 = sys.argv[1:]
apps = [json.load(open("%s/%s.app%d.json" % (d, tag, i))) for i in range(3)]
server = json.load(open("%s/%s.server.json" % (d, tag)))
sent = sum(a["sent"] for a in apps)
met = sum(round((a["slo_attainment_server"] or 0) * a["sent"]) for a in apps)
met_client = sum(round((a["slo_attainment_client"] or 0) * a["sent"]) for a in apps)
row = {"time_scale": float(s), "policy": p, "slo_x_p99": float(x), "slo_ms": float(slo),
       "wanted_qps": float(want), "offered_qps": float(rate), "duration_s": float(secs),
       "capped": float(rate) < float(want) * 0.999,
       "sent": sent, "met": met, "finish_rate": met / sent if sent else 0.0,
       "finish_rate_client": met_client / sent if sent else 0.0,
       "ok": sum(a["ok"] for a in apps),
       "errors_by_status": {k: sum(a["errors_by_status"].get(k, 0) for a in apps)
                            for k in sorted({k for a in apps for k in a["errors_by_status"]})},
       "max_send_lag_ms": max(a["max_send_lag_ms"] for a in apps),
       "server_cpu_s": float(cpu1) - float(cpu0),
       "engine_thread_cpu_s": float(ecpu1) - float(ecpu0), "load_average_1m": float(load),
       "server": server, "loadgen": apps}
json.dump(row, open("%s/%s.row.json" % (d, tag), "w"), indent=1)
print("fig14: scale %-6s %-9s SLO %gx = %-8g ms  %7.1f req/s%s  finish %.3f (client %.3f)  "
      "batch %.2f  CPU server %.2f s engine %.2f s  load %s" % (s, p, float(x), float(slo), float(rate),
      " (capped)" if row["capped"] else "", row["finish_rate"], row["finish_rate_client"],
      server.get("mean_batch_size", 0), row["server_cpu_s"], row["engine_thread_cpu_s"], load),
      file=sys.stderr)
EOF
    done
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
took=$(( $(date +%s) - start ))
echo "fig14: runs took $took s; load average $load_end at end" >&2

# 3. Summary: table (rows: scale; columns: policy x SLO) and JSON.
python3 - "$out" "$max_qps" "$cap_qps" "$duration" "$load_qps" "$scales" "$policies" "$slo_x" \
  "$(nproc)" "$load_start" "$load_end" "$took" "$bin_src" "$min_requests" "$cap_fraction" <<'EOF'
import json, sys, glob
out, max_qps, cap_qps, duration, load_qps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
cores, load_start, load_end, took, binary, min_requests, cap_fraction = sys.argv[9:16]
scales = [float(v) for v in sys.argv[6].split()]
pols = sys.argv[7].split()
xs = [float(v) for v in sys.argv[8].split()]
rows = [json.load(open(f)) for f in sorted(glob.glob(out + "/runs/*.row.json"))]
rows = [r for r in rows if r["time_scale"] in scales and r["policy"] in pols and r["slo_x_p99"] in xs]
by = {(r["time_scale"], r["policy"], r["slo_x_p99"]): r for r in rows}
names = {"orloj": "ORLOJ", "clockwork": "Clockwork", "nexus": "Nexus", "clipper": "Clipper"}
lines = []
head = "| scale | P99 alone | req/s |" + "".join(
    " %s %gx |" % (names.get(p, p), x) for p in pols for x in xs)
lines.append(head)
lines.append("|" + " --- |" * (3 + len(pols) * len(xs)))
for s in scales:
    any_r = next((by[(s, p, x)] for p in pols for x in xs if (s, p, x) in by), None)
    if any_r is None:
        continue
    cells = []
    for p in pols:
        for x in xs:
            r = by.get((s, p, x))
            cells.append("%.2f" % r["finish_rate"] if r else "-")
    rate = "%.0f%s" % (any_r["offered_qps"], " (capped)" if any_r["capped"] else "")
    lines.append("| %g | %s ms | %s | %s |" % (s, "%.3g" % (118.8 * s), rate, " | ".join(cells)))
table = "\n".join(lines)
summary = {"machine": {"cores": int(cores), "load_average_start": load_start,
                       "load_average_end": load_end, "runs_took_s": int(took)},
           "binary": binary, "scales": scales, "policies": pols, "slo_x_p99": xs,
           "min_requests": int(min_requests), "cap_fraction": float(cap_fraction),
           "max_qps": max_qps, "cap_qps": cap_qps, "min_duration_s": duration,
           "load_qps_at_scale_1": load_qps, "rows": [
               {k: r[k] for k in ("time_scale", "policy", "slo_x_p99", "slo_ms", "wanted_qps",
                                  "offered_qps", "duration_s", "capped", "sent", "met", "finish_rate",
                                  "finish_rate_client", "errors_by_status", "max_send_lag_ms",
                                  "server_cpu_s", "engine_thread_cpu_s", "load_average_1m")} |
               {"server_" + k: r["server"].get(k) for k in ("finish_rate", "mean_batch_size",
                                                            "utilization", "dropped", "late",
                                                            "batches", "elapsed_s",
                                                            "p99_ms", "mean_queue_ms")}
               for r in sorted(rows, key=lambda r: (-r["time_scale"], r["policy"], r["slo_x_p99"]))]}
json.dump(summary, open(out + "/fig14.json", "w"), indent=1)
open(out + "/fig14.md", "w").write(table + "\n")
print(table)
EOF
