#!/usr/bin/env bash
# Live per-priority admission (docs/admission.md "Priority classes"): `sloserve serve`
# (default config, admission on, 2 priority levels) driven by two `sloserve loadgen`s at
# once, QPS each, one sending parameters.priority 1 (high) and one 2 (low), for DURATION s.
#   experiments/admission/live_priority.sh [BIN] [DURATION] [QPS]
# Prints the machine's load, then per level the server's view (serve --json
# `priorities`: arrived, shed, share of admitted meeting the SLO) and each client's
# (sent, 200s, 429s, share of 200s within the SLO, its send-lag p99).
set -euo pipefail
bin=${1:-build/apps/sloserve/sloserve}
duration=${2:-8}
qps=${3:-1900}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(nproc) cores, loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $qps qps per class, ${duration} s"
"$bin" serve --port 0 --set engine.admission=on --json >"$out/serve.json" 2>"$out/serve.err" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$out/serve.err" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$out/serve.err")
for p in 1 2; do
  "$bin" loadgen --port "$port" --qps "$qps" --duration "$duration" --max-connections 2048 \
    --timeout 20 --slo-ms 150 --priority "$p" --seed "$p" --json >"$out/load$p.json" 2>/dev/null &
done
wait %2 %3 || true
kill -TERM "$pid"; wait "$pid" || true
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
srv = json.load(open(f"{out}/serve.json"))
print("level  srv_arrived srv_shed shed_rate srv_adm_met |   sent     ok    429 met_ok send_lag_p99_ms")
by = {p["level"]: p for p in srv.get("priorities", [])}
for level in (1, 2):
    r = json.load(open(f"{out}/load{level}.json"))
    p = by.get(level, {"arrived": 0, "shed": 0, "shed_rate": 0, "admitted_met_rate": 0})
    shed = r.get("errors_by_status", {}).get("429", 0)
    met = round(r["slo_attainment_client"] * r["sent"])
    lag = r.get("client_bottleneck", {}).get("send_lag_p99_ms", float("nan"))
    print(f"{level:5d}  {p['arrived']:11d} {p['shed']:8d} {p['shed_rate']:9.3f} {p['admitted_met_rate']:11.3f} | "
          f"{r['sent']:6d} {r['ok']:6d} {shed:6d} {met / max(r['ok'], 1):6.3f} {lag:15.1f}")
print(f"all    admitted_met_rate {srv['admitted_met_rate']:.3f}, goodput {srv['goodput_qps']:.1f} qps, p99 {srv['p99_ms']:.1f} ms")
PY
echo "# $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
