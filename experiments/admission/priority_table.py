#!/usr/bin/env python3
"""Markdown table of per-priority admission from `sloserve sim --json` rows
(docs/admission.md "Priority classes"):
  sloserve sim experiments/admission/priority_image.yaml --json > r.json
  experiments/admission/priority_table.py r.json
"""
import json
import sys

rows = json.load(open(sys.argv[1]))["rows"]
print("| offered (qps) | level | arrived | shed | shed rate | admitted met | "
      "all: admitted met | all: goodput (qps) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    for p in r.get("priorities", []):
        print(f"| {r['load_qps']:,.0f} | {p['level']} | {p['arrived']:,} | {p['shed']:,} | "
              f"{100 * p['shed_rate']:.1f}% | {100 * p['admitted_met_rate']:.2f}% | "
              f"{100 * r['admitted_met_rate']:.2f}% | {r['goodput_qps']:,.0f} |")
