#!/usr/bin/env python3
"""One method of experiments/composed/hour.yaml as a config of its own (for `serve`, which
runs one configuration), or the models' trace windows (for loadgen).

    one_method.py CONFIG METHOD BUDGET [DIR]   the config: the method's row as `policy:`,
                                         the budget fixed, no sweep, no `policies:`; to
                                         be written in DIR (default CONFIG's folder):
                                         relative suite paths are rewritten for it
    one_method.py CONFIG --workloads     one line per model: name, trace path, first
                                         second, rate scale

Reads the YAML subset hour.yaml is written in (flow mappings on one line); Python 3
standard library only.
"""
import os
import re
import sys


def flow_items(text):
    """'{a: 1, b: "x,y"}' -> [('a', '1'), ('b', '"x,y"')] (commas inside quotes kept)."""
    body = text.strip()[1:-1]
    parts, cur, quote = [], "", False
    for ch in body:
        if ch == '"':
            quote = not quote
        if ch == "," and not quote:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [tuple(s.strip() for s in p.split(":", 1)) for p in parts]


def main():
    path = sys.argv[1]
    text = open(path).read()
    folder = os.path.dirname(os.path.abspath(path))
    if sys.argv[2] == "--workloads":
        for m in re.finditer(r"- name: (\S+)\n(?:    .*\n)*?    workload: (\{.*\})", text):
            w = dict(flow_items(m.group(2)))
            trace = w["trace"]
            if not os.path.exists(trace):
                trace = os.path.join("profiles/traces", trace)
            print(m.group(1), trace, w.get("window_start_s", "0"), w.get("rate_scale", "1"))
        return 0
    method, budget = sys.argv[2], sys.argv[3]
    target = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else folder
    head, rest = text.split("\npolicy:\n", 1)
    rows = [l for l in rest.splitlines() if l.strip().startswith("- {name: ")]
    row = next((l for l in rows if l.strip().startswith("- {name: %s," % method)), None)
    if row is None:
        sys.exit("one_method.py: no method '%s' in %s" % (method, path))
    # Relative suite paths are relative to the config's folder: rewrite them relative to
    # the folder the new config is written in (a clone anywhere still finds them).
    head = re.sub(r"suite: (\.\.?/\S+)", lambda m: "suite: " + os.path.relpath(
        os.path.join(folder, m.group(1)), target), head)
    out = [head, "policy:", "  budget_usd_per_h: %s" % budget]
    for key, value in flow_items(row.strip()[2:]):
        if key != "name":
            out.append("  %s: %s" % (key, value))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
