#!/bin/bash
# Cost per query against the number of models on the pool (issue 31, "Performance"): the
# same load (400 queries/s of Poisson arrivals for 30 s, bert_tiny on 20 workers, every
# model resident) spread equally over 1, 10, 100 and 1,000 copies of one model, and, for
# comparison, the single-model config (no models:). Prints wall-clock microseconds per
# query of `sloserve sim` (the best of REPEAT runs; the whole run: arrivals, engine,
# policies, per-model rows), so a number is only comparable on one machine at one time.
#   experiments/multi-model/model_count.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), REPEAT (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
REPEAT=${REPEAT:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head='suite: ramsis-text
workers: 20
duration_s: 30
workload: {arrival: poisson, load_qps: 400}
policy: {variant: bert_tiny}'
printf '%s\ntask: text\npolicy: {variant: bert_tiny}\n' "$(echo "$head" | grep -v '^policy')" \
  > "$tmp/single.yaml"
for n in 1 10 100 1000; do
  printf '%s\nmodels: [{name: m, task: text, variants: bert_tiny, copies: %d}]\n' \
    "$(echo "$head" | grep -v '^policy')" "$n" > "$tmp/n$n.yaml"
done
echo "| models | queries | us per query (best of $REPEAT) |"
echo "| --- | --- | --- |"
for c in single n1 n10 n100 n1000; do
  best=""
  for _ in $(seq "$REPEAT"); do
    line=$("$BIN" sim "$tmp/$c.yaml" --json --no-progress | python3 -c 'import json, sys
r = json.load(sys.stdin)["rows"][0]
print(r["arrived"], "%.2f" % (r["wall_s"] * 1e6 / r["arrived"]))')
    us=${line#* }
    if [ -z "$best" ] || awk "BEGIN {exit !($us < $best)}"; then best=$us; fi
    queries=${line% *}
  done
  label=${c#n}
  [ "$c" = single ] && label="single-model config"
  echo "| $label | $queries | $best |"
done
