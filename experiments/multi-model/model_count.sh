#!/bin/bash
# Cost per query against the number of models on the pool (issue 31, "Performance"): the
# same load (400 queries/s of Poisson arrivals, bert_tiny on 20 workers, every
# model resident) spread equally over 1, 10, 100 and 1,000 copies of one model, and, for
# comparison, the single-model config (no models:), each for 30 s and for 120 s of load.
# Prints the wall seconds of `sloserve sim` (best of REPEAT runs: set-up, arrivals,
# engine, policies, per-model rows) and the cost of a query, the difference of the two
# over the difference of their queries; comparable only on one machine at one time.
#   experiments/multi-model/model_count.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), REPEAT (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
REPEAT=${REPEAT:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
config() {  # NAME DURATION_S MODELS_LINE
  printf 'suite: ramsis-text\nworkers: 20\nduration_s: %s\nworkload: {arrival: poisson, load_qps: 400}\n%s\n' \
    "$2" "$3" > "$tmp/$1_$2.yaml"
}
# Best-of-REPEAT wall seconds and the arrivals of one config.
measure() {
  local best="" queries=""
  for _ in $(seq "$REPEAT"); do
    read -r queries wall < <("$BIN" sim "$1" --json --no-progress | python3 -c 'import json, sys
r = json.load(sys.stdin)["rows"][0]
print(r["arrived"], r["wall_s"])')
    if [ -z "$best" ] || awk "BEGIN {exit !($wall < $best)}"; then best=$wall; fi
  done
  echo "$queries $best"
}
echo "| models | wall s, 30 s of load | wall s, 120 s of load | us per added query |"
echo "| --- | --- | --- | --- |"
for n in single 1 10 100 1000; do
  if [ "$n" = single ]; then
    line="task: text
policy: {variant: bert_tiny}"
  else
    line="models: [{name: m, task: text, variants: bert_tiny, copies: $n}]"
  fi
  config "$n" 30 "$line"
  config "$n" 120 "$line"
  read -r q1 w1 < <(measure "$tmp/${n}_30.yaml")
  read -r q2 w2 < <(measure "$tmp/${n}_120.yaml")
  label=$n
  [ "$n" = single ] && label="single-model config"
  echo "| $label | $(printf %.3f "$w1") | $(printf %.3f "$w2") | $(awk "BEGIN {printf \"%.2f\", ($w2 - $w1) * 1e6 / ($q2 - $q1)}") |"
done
