#!/bin/bash
# Reproduces the configuration-planning results of docs/kairos-planning.md (Kairos,
# HPDC'23, Figs. 8-11, 13-16) from the kairos-recsys profiles. Every simulated
# configuration is cached under experiments/kairos/tables/ (delete a file to recompute
# it); JSON results and report tables/plots go to $OUT.
#   experiments/kairos/run_planning.sh [MODELS...]        (default: all five)
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), OUT (default
# experiments/kairos/results), JOBS (default 2), BASELINE_MODELS (models for which the
# Ribbon/DRS/CLKWRK spaces are simulated exhaustively, Fig. 10; default: all).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
OUT=${OUT:-experiments/kairos/results}
JOBS=${JOBS:-2}
MODELS=${*:-ncf rm2 wnd mtwnd dien}
BASELINE_MODELS=${BASELINE_MODELS:-ncf rm2 wnd mtwnd dien}
TABLES=experiments/kairos/tables
mkdir -p "$OUT/plots" "$TABLES"
for m in $MODELS; do
  cfg=experiments/kairos/plan_$m.yaml
  echo "== $m: exhaustive optimum and searches (Kairos dispatch)" >&2
  "$BIN" plan kairos "$cfg" --policy kairos --evaluate all --search kairos+,random,genetic,annealing \
    --cache "$TABLES" --jobs "$JOBS" --json > "$OUT/${m}_exhaustive.json"
  if [[ " $BASELINE_MODELS " == *" $m "* ]]; then
    for p in ribbon drs clkwrk; do
      echo "== $m: exhaustive optimum and Kairos+ search with $p dispatch" >&2
      "$BIN" plan kairos "$cfg" --policy "$p" --evaluate all --search kairos+ \
        --cache "$TABLES" --jobs "$JOBS" --json > "$OUT/${m}_exhaustive_$p.json"
    done
  fi
  echo "== $m: top-20 under every dispatcher" >&2
  "$BIN" plan kairos "$cfg" --evaluate top --cache "$TABLES" --jobs "$JOBS" --json > "$OUT/${m}_top.json"
  "$BIN" report "$OUT/${m}_top.json" --x rank --y qps --series series --out "$OUT/plots/$m" \
    --title "$m top-20 configurations" > "$OUT/${m}_top.md"
  echo "== $m: robustness (budget 10 \$/h, QoS +20%, Gaussian sizes, 5% noise)" >&2
  "$BIN" plan kairos "$cfg" --policy kairos --evaluate top --top 1 --budget 10 \
    --set plan.max_instances= --jobs "$JOBS" --json > "$OUT/${m}_budget10.json"
  slo=$(awk '/QoS/ {for (i = 1; i <= NF; i++) if ($i == "(QoS") {print $(i + 1); exit}}' "$cfg")
  "$BIN" plan kairos "$cfg" --policy kairos --evaluate top --top 1 \
    --set "slo_ms=$(awk -v s="$slo" 'BEGIN {print s * 1.2}')" --jobs "$JOBS" --json > "$OUT/${m}_qos120.json"
  "$BIN" plan kairos "$cfg" --policy kairos --evaluate top --top 1 \
    --set workload.sizes=gaussian:240:120 --jobs "$JOBS" --json > "$OUT/${m}_gaussian.json"
  "$BIN" plan kairos "$cfg" --policy kairos --evaluate top --top 1 \
    --set policy.prediction_noise=0.05 --jobs "$JOBS" --json > "$OUT/${m}_noise.json"
done
