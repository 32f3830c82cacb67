#!/bin/bash
# Reproduces the SigmaOS model-aware scheduling thesis (K. Liu, MIT 2025, chapter 6) in
# the simulator: section 6.2 (10 sequential requests, default vs colocation), 6.3 (the
# amortisation point), Tables 6.1-6.3 (each policy's winning workload, with adaptive; 6.4.2
# also with the thesis' random spawning of registry requests) and
# the multi-model Zipf workload against cache size (not in the thesis). Writes the JSON
# results and an SVG plot to $OUT and prints the markdown tables of docs/model-aware.md
# (tools/model_aware_tables.py, with the thesis' numbers beside ours).
#   experiments/model-aware/run.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), OUT (default
# experiments/model-aware/results).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
OUT=${OUT:-experiments/model-aware/results}
mkdir -p "$OUT/plots"
for name in sec62_sequential sec63_amortisation sec641_colocation_win sec642_queue_win \
            sec642_registry_spawn sec643_registry_win zipf_cache_sweep; do
  echo "== $name" >&2
  "$BIN" sim "experiments/model-aware/$name.yaml" --json > "$OUT/$name.json"
done
# Latency on a log axis: the policies span 1 s to 6 minutes.
"$BIN" report "$OUT/zipf_cache_sweep.json" --x cluster.cache_mb --y mean_latency_s --logy \
  --out "$OUT/plots/zipf" --title "12 models, Zipf s=1" > /dev/null
"$BIN" report "$OUT/zipf_cache_sweep.json" --x cluster.cache_mb --y cold_starts \
  --out "$OUT/plots/zipf" --title "12 models, Zipf s=1" > /dev/null
python3 tools/model_aware_tables.py "$OUT"
