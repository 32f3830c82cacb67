#!/usr/bin/env python3
"""One method of experiments/composed/hour.yaml as a config of its own (for `serve`, which
runs one configuration), or the models' trace windows (for loadgen).

    one_method.py CONFIG [--add FILE] METHOD BUDGET [DIR]
        the config: the method's row as `policy:`, the budget fixed, no sweep, no
        `policies:`; to be written in DIR (default CONFIG's folder): relative suite and
        repository paths are rewritten for it
    one_method.py CONFIG [--add FILE] --workloads
        one line per model: name, trace path, first second, rate scale, and for a model
        from a model repository its held-out set (REPOSITORY/TASK/heldout.json), if any

--add FILE: also the models of FILE (live_digits.yaml), its starting pool (hardware:)
and hardware_prices, and its policy: keys other than planning and budget_usd_per_h as
options of every method.

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


MODEL_RE = r"- name: (\S+)\n((?:    .*\n)*?)    workload: (\{.*\})"


def rebase(text, folder, target):
    """Relative suite and repository paths, written for `folder`, rewritten for `target`."""
    return re.sub(r"(suite|repository): (\.\.?/\S+)", lambda m: "%s: %s" % (
        m.group(1), os.path.relpath(os.path.join(folder, m.group(2)), target)), text)


def block(text, key):
    """The indented lines under a top-level `key:`."""
    m = re.search(r"^%s:\n((?:(?:  .*)?\n)*)" % key, text, re.M)
    return m.group(1) if m else ""


def policy_options(text):
    """FILE's policy: keys that are method options (not planning or the budget)."""
    out = []
    for line in block(text, "policy").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, value = (s.strip() for s in line.split(":", 1))
            if key not in ("planning", "budget_usd_per_h"):
                out.append((key, value))
    return out


def workloads(text, folder):
    for m in re.finditer(MODEL_RE, text):
        w = dict(flow_items(m.group(3)))
        trace = w["trace"]
        if not os.path.exists(trace):
            trace = os.path.join("profiles/traces", trace)
        fields = [m.group(1), trace, w.get("window_start_s", "0"), w.get("rate_scale", "1")]
        repo = re.search(r"    repository: (\S+)", m.group(2))
        if repo:
            task = re.search(r"    task: (\S+)", m.group(2))
            heldout = os.path.join(folder, repo.group(1), task.group(1) if task else m.group(1),
                                   "heldout.json")
            if os.path.exists(heldout):
                fields.append(os.path.relpath(heldout))
        print(" ".join(fields))


def main():
    args = sys.argv[1:]
    path = args.pop(0)
    add = None
    if args and args[0] == "--add":
        add, args = args[1], args[2:]
    text = open(path).read()
    folder = os.path.dirname(os.path.abspath(path))
    add_text = open(add).read() if add else ""
    add_folder = os.path.dirname(os.path.abspath(add)) if add else folder
    if args[0] == "--workloads":
        workloads(text, folder)
        workloads(add_text, add_folder)
        return 0
    method, budget = args[0], args[1]
    target = os.path.abspath(args[2]) if len(args) > 2 else folder
    head, rest = text.split("\npolicy:\n", 1)
    rows = [l for l in rest.splitlines() if l.strip().startswith("- {name: ")]
    row = next((l for l in rows if l.strip().startswith("- {name: %s," % method)), None)
    if row is None:
        sys.exit("one_method.py: no method '%s' in %s" % (method, path))
    # Relative paths are relative to the config's folder: rewrite them relative to the
    # folder the new config is written in (a clone anywhere still finds them).
    head = rebase(head, folder, target)
    options = [kv for kv in flow_items(row.strip()[2:]) if kv[0] != "name"]
    if add:
        # FILE's prices join (and win over) the config's; its models follow the config's.
        prices = re.search(r"^hardware_prices: (\{.*\})", add_text, re.M)
        if prices:
            ours = re.search(r"^hardware_prices: (\{.*\})", head, re.M)
            merged = dict(flow_items(ours.group(1))) if ours else {}
            merged.update(flow_items(prices.group(1)))
            line = "hardware_prices: {%s}" % ", ".join("%s: %s" % kv for kv in merged.items())
            head = head[:ours.start()] + line + head[ours.end():] if ours else head + "\n" + line
        # FILE's starting pool joins the config's (every model needs a worker to start with).
        pool = re.search(r'^hardware: "(.*)"', add_text, re.M)
        if pool:
            head = re.sub(r'^hardware: "(.*)"', lambda m: 'hardware: "%s,%s"' % (
                m.group(1), pool.group(1)), head, count=1, flags=re.M)
        head = head.rstrip("\n") + "\n" + rebase(block(add_text, "models"), add_folder,
                                                 target).rstrip("\n")
        options += policy_options(add_text)
    out = [head, "policy:", "  budget_usd_per_h: %s" % budget]
    for key, value in options:
        out.append("  %s: %s" % (key, value))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
