#!/usr/bin/env bash
# LibTorch through `serve` against direct calls on the same cores (issue 35, "Performance"):
# for each batch size B, the direct-call throughput of VARIANT at batch B on one thread
# (torch_bench BM_Direct, rows/s) and the rows/s `serve --model-repository models` sustains
# with one 1-core worker running VARIANT at batch B (fixed selection, max_batch B,
# admission off), driven past saturation by `sloserve loadgen --rows B` (each request is one
# batch of B rows; offered 2x the direct rate, at most 256 requests outstanding, so the
# worker never idles; a row whose offered rate was met is marked: it did not saturate): served rows/s = loadgen's achieved requests/s (completed / start ->
# last completion) x B. The worker runs on one core; serve's io thread and loadgen share
# the other. Prints one line per batch size and the ratio served / direct.
#   bench/torch_serve.sh [BUILD_DIR] [VARIANT] [BATCHES] [SECONDS]
#   bench/torch_serve.sh build cnn_large "1 4 8" 6
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
variant=${2:-cnn_large}
batches=${3:-1 4 8}
seconds=${4:-6}
bin=$build/apps/sloserve/sloserve
bench=$build/bench/torch_bench
for f in "$bin" "$bench"; do
  [ -x "$f" ] || { echo "torch_serve.sh: $f missing (ninja -C $build sloserve torch_bench)" >&2; exit 1; }
done
# Variant index in the repository (sorted by name), as torch_bench numbers them.
index=$(ls -d models/digits/*/ | xargs -n1 basename | sort | grep -nx "$variant" | cut -d: -f1)
[ -n "$index" ] || { echo "torch_serve.sh: no variant '$variant' in models/digits" >&2; exit 1; }
index=$((index - 1))
tmp=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %6s %14s %14s %8s %10s\n' variant batch "direct rows/s" "serve rows/s" ratio "p50 ms"
for b in $batches; do
  "$bench" --benchmark_filter="BM_Direct/$index/$b/real_time\$" --benchmark_min_time=2 \
    --benchmark_format=json >"$tmp/direct.json" 2>/dev/null
  direct=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["benchmarks"][0]["items_per_second"])' "$tmp/direct.json")
  cat >"$tmp/serve.yaml" <<YAML
suite: models/digits/profile.prof
task: digits
hardware: local-1c
workers: 1
slo_ms: 60000
engine: {admission: off}
policy: {name: fixed, dispatch: round_robin, batching: edf, selection: fixed, variant: $variant, max_batch: $b}
YAML
  "$bin" serve "$tmp/serve.yaml" --model-repository models --port 0 >"$tmp/serve.log" 2>&1 &
  server=$!
  port=
  for _ in $(seq 300); do
    port=$(grep -o "http://127.0.0.1:[0-9]*" "$tmp/serve.log" | head -1 | sed 's/.*://') || true
    [ -n "$port" ] && grep -q "ready" "$tmp/serve.log" && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "torch_serve.sh: serve did not start:" >&2; cat "$tmp/serve.log" >&2; exit 1; }
  qps=$(python3 -c "print(2 * $direct / $b)")
  "$bin" loadgen --port "$port" --model digits --rows "$b" --qps "$qps" --duration "$seconds" \
    --connections 64 --max-connections 256 --timeout 120 --json >"$tmp/load.json" 2>/dev/null
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
  python3 - "$tmp/load.json" "$variant" "$b" "$direct" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = int(sys.argv[3]); direct = float(sys.argv[4])
if r["ok"] != r["sent"]:
    sys.exit("torch_serve.sh: %d of %d requests failed: %s" % (r["sent"] - r["ok"], r["sent"], r.get("error_examples")))
served = r["achieved_qps"] * b
note = "" if r["achieved_qps"] < 0.95 * r["offered_qps"] else "  (offered rate met: not saturated)"
print("%-10s %6d %14.0f %14.0f %8.3f %10.1f%s" % (sys.argv[2], b, direct, served, served / direct, r["latency_ms"]["p50"], note))
PY
done
