#!/usr/bin/env bash
# Live overload table (docs/admission.md): `sloserve serve` on the default config with
# admission off and on, driven by `sloserve loadgen` at the given loads for DURATION s.
#   experiments/admission/live.sh [BIN] [DURATION] [LOADS...]
# Prints one line per (admission, load): sent, ok, 429, other errors, client p99 of the
# answered (from the scheduled send time), client-side share of answers meeting the SLO,
# goodput (answers that met the SLO per second, client side), and the server's own view
# (serve --json): shed, share of admitted meeting the SLO, p99 of completed.
set -euo pipefail
bin=${1:-build/apps/sloserve/sloserve}
duration=${2:-10}
shift 2 || true
loads=("$@")
[ ${#loads[@]} -gt 0 ] || loads=(1500 3000 6000)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The machine's load beside the numbers: this is a live measurement on shared cores.
echo "# $(date -u +%FT%TZ) $(nproc) cores, loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '%-9s %6s %7s %7s %7s %7s %9s %7s %8s | %7s %8s %8s\n' admission qps sent ok shed_429 other p99_ms met_ok goodput srv_shed srv_adm srv_p99
for admission in ${ADMISSION:-off on}; do
  for qps in "${loads[@]}"; do
    "$bin" serve --port 0 --set "engine.admission=$admission" --json >"$out/serve.json" 2>"$out/serve.err" &
    pid=$!
    for _ in $(seq 100); do grep -q "listening on" "$out/serve.err" 2>/dev/null && break; sleep 0.1; done
    port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$out/serve.err")
    "$bin" loadgen --port "$port" --qps "$qps" --duration "$duration" --max-connections 4096 \
      --timeout 20 --slo-ms 150 --json >"$out/load.json" 2>/dev/null || true
    kill -TERM "$pid"; wait "$pid" || true
    python3 - "$admission" "$qps" "$duration" "$out/load.json" "$out/serve.json" <<'PY'
import json, sys
adm, qps, dur, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
srv = json.load(open(sys.argv[5]))
r = json.load(open(path))
errs = r.get("errors_by_status", {})
shed = errs.get("429", 0)
other = r["http_errors"] + r.get("timeouts", 0) + r.get("transport_errors", 0) - shed
ok = r["ok"]
met = round(r["slo_attainment_client"] * r["sent"])  # attainment is over sent requests
p99 = r["latency_ms"]["p99"]
print(f"{adm:<9} {qps:6.0f} {r['sent']:7d} {ok:7d} {shed:7d} {other:7d} {p99:9.1f} {met/max(ok,1):7.3f} {met/dur:8.1f} | "
      f"{srv['shed']:8d} {srv['admitted_met_rate']:8.3f} {srv['p99_ms']:8.1f}")
PY
  done
done
echo "# $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
