#!/usr/bin/env python3
"""Issue 30: every committed config is valid against the generated JSON Schema (checked with
a real validator, Debian's python3-jsonschema) and passes `sloserve config check`; broken
copies of them fail both, and `config check` names the line, the column and the key.

usage: config_files_test.py SLOSERVE_BINARY REPO_ROOT
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema
import yaml

BIN, ROOT = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    # From the repository's root, as the docs run their commands: a docs snippet's path
    # that is not beside its (temporary) file is tried from there.
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def committed_configs():
    """Experiment and serve configs in the tree (model repositories' config.yaml files are
    another format, docs/torch.md, read by the model repository's own parser)."""
    files = sorted(glob.glob(os.path.join(ROOT, "experiments", "**", "*.yaml"), recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.yaml"), recursive=True))
    return files


def doc_snippets():
    """```yaml blocks of docs/*.md that are configs (not a model repository's config.yaml)."""
    out = []
    for md in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        text = open(md).read()
        for m in re.finditer(r"```yaml\n(.*?)```", text, re.S):
            line = text[: m.start()].count("\n") + 2
            doc = yaml.safe_load(m.group(1))
            if isinstance(doc, dict) and "model_file" not in doc:
                out.append((f"{os.path.relpath(md, ROOT)}:{line}", m.group(1), doc))
    return out


schema_run = run("config", "schema")
if schema_run.returncode != 0:
    print(schema_run.stderr)
    sys.exit(1)
schema = json.loads(schema_run.stdout)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)


def schema_errors(doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


# 1. Every committed config and doc snippet validates against the schema.
configs = committed_configs()
if len(configs) < 40:
    fail(f"found only {len(configs)} committed configs under {ROOT}")
for path in configs:
    doc = yaml.safe_load(open(path))
    for e in schema_errors(doc):
        fail(f"schema: {os.path.relpath(path, ROOT)}: {e}")
snippets = doc_snippets()
if len(snippets) < 4:
    fail(f"found only {len(snippets)} config snippets in docs/")
for where, text, doc in snippets:
    for e in schema_errors(doc):
        fail(f"schema: {where}: {e}")

# 2. config check passes on all of them, in one call.
check = run("config", "check", *configs)
if check.returncode != 0:
    fail(f"config check on the committed configs: exit {check.returncode}\n{check.stdout}{check.stderr}")
with tempfile.TemporaryDirectory() as tmp:
    snippet_files = []
    for i, (where, text, doc) in enumerate(snippets):
        p = os.path.join(tmp, f"snippet{i}.yaml")
        open(p, "w").write(text)
        snippet_files.append(p)
    check = run("config", "check", *snippet_files)
    if check.returncode != 0:
        fail(f"config check on the docs' snippets: {check.stdout}{check.stderr}")

    # 3. Broken copies: a misspelt key and an out-of-range value in each of several real
    # configs. The schema rejects them; config check reports both, each at its line.
    samples = [p for p in configs if not yaml.safe_load(open(p)).get("cluster")][::7]
    for path in samples:
        lines = open(path).read().split("\n")
        lines.insert(0, "wrokers: 3")  # line 1, column 1
        lines.append("slo_ms: 1000000000000")  # the last line; replaces any earlier slo_ms
        broken_text = "\n".join(l for l in lines if not l.startswith("slo_ms:") or l == "slo_ms: 1000000000000")
        broken = os.path.join(tmp, os.path.basename(path))
        open(broken, "w").write(broken_text)
        slo_line = broken_text.split("\n").index("slo_ms: 1000000000000") + 1
        doc = yaml.safe_load(broken_text)
        errs = schema_errors(doc)
        if not any("wrokers" in e for e in errs):
            fail(f"schema accepted the misspelt key in a copy of {path}: {errs}")
        if not any("slo_ms" in e for e in errs):
            fail(f"schema accepted slo_ms 1000000000000 in a copy of {path}: {errs}")
        r = run("config", "check", broken)
        if r.returncode != 1:
            fail(f"config check on a broken copy of {path}: exit {r.returncode}")
        if f"{broken}:1:1: unknown key 'wrokers' (did you mean 'workers'?" not in r.stdout:
            fail(f"config check did not place the misspelt key of {path}: {r.stdout}")
        if f"{broken}:{slo_line}:1: slo_ms: value: must be in [0, 86400000] (got 1e+12)" not in r.stdout:
            fail(f"config check did not place the slo_ms error of {path} at line {slo_line}: {r.stdout}")

    # A nested key, a sweep value and a policy option, misspelt or wrong.
    nested = os.path.join(tmp, "nested.yaml")
    open(nested, "w").write(
        "suite: ramsis-image\nworkload:\n  lod_qps: 5\npolicy:\n  batching: edff\n"
        "sweep:\n  workers: [1, 0]\n")
    r = run("config", "check", nested, "--json")
    report = json.loads(r.stdout)
    got = {(e["line"], e["column"], e["key"]) for e in report["errors"]}
    for want in [(3, 3, "workload.lod_qps"), (5, 3, "policy.batching"), (7, 16, "workers")]:
        if want not in got:
            fail(f"config check --json: expected an error at {want}, got {sorted(got)}")
    if r.returncode != 1:
        fail("config check --json on a broken file should exit 1")
    if not schema_errors(yaml.safe_load(open(nested))):
        fail("schema accepted nested.yaml")

    # A cluster experiment (its own keys, also declared): a value out of range and a typo.
    cluster = os.path.join(tmp, "cluster.yaml")
    open(cluster, "w").write("suite: t5-translation\ncluster:\n  machines: 0\n  cahce_mb: 5\n"
                             "workload:\n  kind: phases\n  model: t5-small\n")
    r = run("config", "check", cluster)
    for want in [f"{cluster}:3:3: cluster.machines: value: must be in [1, 100000] (got 0)",
                 f"{cluster}:4:3: unknown key 'cluster.cahce_mb' (did you mean 'cluster.cache_mb'?"]:
        if want not in r.stdout:
            fail(f"config check on a broken cluster experiment: expected {want!r} in {r.stdout}")
    errs = schema_errors(yaml.safe_load(open(cluster)))
    if not any("cahce_mb" in e for e in errs) or not any("machines" in e for e in errs):
        fail(f"schema on a broken cluster experiment: {errs}")

# 4. docs/config.md's reference is the declarations' (scripts/refresh-docs config-reference).
page = open(os.path.join(ROOT, "docs", "config.md")).read()
m = re.search(r"<!-- refresh-docs:begin config-reference -->\n<sub>[^\n]*</sub>\n\n(.*)\n"
              r"<!-- refresh-docs:end config-reference -->", page, re.S)
reference = run("config", "reference").stdout.strip("\n")
if not m or m.group(1).strip("\n") != reference:
    fail("docs/config.md is not the current `sloserve config reference`: run "
         "scripts/refresh-docs config-reference")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"OK: {len(configs)} configs and {len(snippets)} doc snippets valid; broken copies refused")
