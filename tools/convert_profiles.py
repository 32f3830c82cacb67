#!/usr/bin/env python3
"""Converts the published paper datasets into sloserve's profile format.

Reads ../shared/datasets (see its README) and writes the embedded suites and traces
under profiles/. Format: docs/profiles.md. Python 3 stdlib only; deterministic output,
so re-running it on the same datasets leaves `git diff` empty.

usage: tools/convert_profiles.py [DATASETS_DIR] [--out PROFILES_DIR]
"""

import argparse
import csv
import json
import math
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = "tools/convert_profiles.py"
HEADER = [
    "sloserve-profile 1",
    "# sloserve profile suite; format: docs/profiles.md. All times are integer microseconds.",
]
# Samples per latency/load line: keeps lines short enough to diff.
SAMPLES_PER_LINE = 100

RAMSIS_REPO = "github.com/dmmendo/RAMSIS commit 9b74967"
INFADAPTER_REPO = "github.com/reconfigurable-ml-pipeline/InfAdapter commit 398b18f"
# The datasets README names no commit for the Kairos artifact.
KAIROS_REPO = "github.com/boringlee24/hpdc23-kairos (MIT licence; commit not recorded)"


def fail(msg):
    sys.exit(f"convert_profiles: {msg}")


def fmt_num(x):
    """Shortest round-trip decimal; integral values without '.0' (matches the C++ writer)."""
    x = float(x)
    if not math.isfinite(x):
        fail(f"non-finite number {x}")
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    r = repr(x)
    if "e" in r:
        fail(f"number {r} needs exponent notation; the writer uses fixed notation")
    return r


def to_us(value, scale):
    """Rounds value*scale to integer microseconds, half away from zero (core/time.h)."""
    v = value * scale
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


class Suite:
    def __init__(self, name, provenance):
        self.name = name
        self.provenance = provenance
        self.tasks = []  # (name, slo_us, input_name, datatype, shape)
        self.hardware = []  # (name, price, cores, mem_gb)
        self.variants = []  # (name, task, accuracy, memory_mb, load_us)
        self.latency = {}  # (hw, variant) -> {rows: (samples, load_samples|None)}
        self.capacity = []  # (hw, variant, slo_us, p99_us|None, cap, sat)

    def add_latency(self, hw, variant, rows, samples, load=None):
        if not samples or min(samples) < 0:
            fail(f"{self.name}: bad samples for {hw} {variant} {rows}")
        if load is not None and len(load) != len(samples):
            fail(f"{self.name}: load samples not paired for {hw} {variant} {rows}")
        self.latency.setdefault((hw, variant), {})[rows] = (samples, load)

    def write(self, path):
        out = list(HEADER)
        out.append(f"suite {self.name}")
        out.append(f"provenance {self.provenance}")
        for name, slo, iname, dtype, shape in self.tasks:
            out.append(f"task {name} {slo} {iname} {dtype} {','.join(map(str, shape))}")
        for name, price, cores, mem in self.hardware:
            out.append(f"hardware {name} {fmt_num(price)} {cores} {fmt_num(mem)}")
        for name, task, acc, mem, load in self.variants:
            out.append(f"variant {name} {task} {fmt_num(acc)} {fmt_num(mem)} {load}")
        hw_order = [h[0] for h in self.hardware]
        v_order = [v[0] for v in self.variants]
        for hw in hw_order:
            for v in v_order:
                for rows, (samples, load) in sorted(self.latency.get((hw, v), {}).items()):
                    emit_samples(out, "latency", hw, v, rows, samples)
                    if load is not None:
                        emit_samples(out, "load", hw, v, rows, load)
        for hw, v, slo, p99, cap, sat in self.capacity:
            p99s = "-" if p99 is None else str(p99)
            out.append(f"capacity {hw} {v} {slo} {p99s} {fmt_num(cap)} {fmt_num(sat)}")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(out) + "\n")
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def emit_samples(out, kind, hw, v, rows, samples):
    for i in range(0, len(samples), SAMPLES_PER_LINE):
        chunk = " ".join(str(s) for s in samples[i : i + SAMPLES_PER_LINE])
        out.append(f"{kind} {hw} {v} {rows} {chunk}")


def canonical_model(name):
    """Maps RAMSIS' alternative spellings (shufflenet_v2_x05, efficientnet_v2l) to one."""
    m = re.fullmatch(r"shufflenet_v2_x(\d)_?(\d)", name)
    if m:
        return f"shufflenet_v2_x{m.group(1)}_{m.group(2)}"
    m = re.fullmatch(r"efficientnet_v2_?([sml])", name)
    if m:
        return f"efficientnet_v2_{m.group(1)}"
    return name


def read_accuracy(path):
    acc = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = canonical_model(row["model"].strip())
            value = float(row["top1_accuracy_percent"])
            if name in acc and acc[name] != value:
                fail(f"{path}: two accuracies for {name}: {acc[name]} and {value}")
            acc[name] = value
    return acc


def convert_ramsis(ds, kind, suite_name, task, slo_ms, input_spec):
    src = os.path.join(ds, "ramsis", f"{kind}_cloud_cpu")
    acc = read_accuracy(os.path.join(ds, "ramsis", f"{kind}_accuracy.csv"))
    prov = (
        f"source=datasets/ramsis/{kind}_cloud_cpu + {kind}_accuracy.csv; repo={RAMSIS_REPO}; "
        f"tool={TOOL}; latencies seconds->us (rounded), all raw samples kept in measurement "
        "order incl. warm-up (the RAMSIS authors use p95 of all); hardware n1-4cpu = GCP n1 "
        "4 vCPU, price = GCP n1-standard-4 on-demand $0.19/h, 15 GB (GCP list values, not in "
        "the dataset); variant memory and load time not measured (0 = unknown)"
    )
    s = Suite(suite_name, prov)
    s.tasks.append((task, slo_ms * 1000) + input_spec)
    s.hardware.append(("n1-4cpu", 0.19, 4, 15))
    for model in sorted(os.listdir(src)):
        if model not in acc:
            fail(f"no accuracy for {model}")
        s.variants.append((model, task, acc[model], 0, 0))
        for fn in os.listdir(os.path.join(src, model)):
            m = re.fullmatch(re.escape(model) + r"_bsize-(\d+)_profile\.json", fn)
            if not m:
                fail(f"unexpected file {model}/{fn}")
            with open(os.path.join(src, model, fn)) as f:
                secs = json.load(f)
            s.add_latency("n1-4cpu", model, int(m.group(1)), [to_us(x, 1e6) for x in secs])
    return s


KAIROS_MODELS = [("ncf", 5), ("rm2", 350), ("wnd", 25), ("mtwnd", 25), ("dien", 35)]
KAIROS_CORES = {"g4dn.xlarge": 4, "c5n.2xlarge": 8, "r5n.large": 2, "t3.xlarge": 4}
# AWS list memory (GiB), not in the dataset.
KAIROS_MEM_GB = {"g4dn.xlarge": 16, "c5n.2xlarge": 21, "r5n.large": 16, "t3.xlarge": 16}


def convert_kairos(ds):
    root = os.path.join(ds, "kairos")
    with open(os.path.join(root, "instance.json")) as f:
        inst = json.load(f)
    prices = {}
    with open(os.path.join(root, "price.csv"), newline="") as f:
        for row in csv.DictReader(f):
            prices[row["instance"]] = float(row["price"])
    for name, price in zip(inst["ins_types"], inst["price"]):
        if prices.get(name) != price:
            fail(f"price of {name} differs between price.csv and instance.json")
    prov = (
        f"source=datasets/kairos/latency + latency/logs_load + price.csv + instance.json; "
        f"repo={KAIROS_REPO}; tool={TOOL}; latencies milliseconds->us (rounded); per file the "
        "sample with the largest latency+load sum is dropped from both lists (the authors' "
        "warm-up rule, grpc_server.py), all other samples kept in order; load records are "
        "paired index by index with their latency records; one variant per task, accuracy/"
        "memory/load time not applicable (0); cores and memory GB are AWS list values"
    )
    s = Suite("kairos-recsys", prov)
    for model, qos_ms in KAIROS_MODELS:
        s.tasks.append((model, qos_ms * 1000, "features", "FP32", [-1, -1]))
    for name in inst["ins_types"]:
        s.hardware.append((name, prices[name], KAIROS_CORES[name], KAIROS_MEM_GB[name]))
    for model, _ in KAIROS_MODELS:
        s.variants.append((model, model, 0, 0, 0))
    for hw in inst["ins_types"]:
        for model, _ in KAIROS_MODELS:
            for rows in range(10, 1001, 10):
                fn = f"{model}_{rows}_1.json"
                with open(os.path.join(root, "latency", hw, fn)) as f:
                    lat = json.load(f)
                with open(os.path.join(root, "latency", "logs_load", hw, fn)) as f:
                    load = json.load(f)
                if len(lat) != len(load) or not lat:
                    fail(f"{hw}/{fn}: latency and load lists differ in length")
                total = [a + b for a, b in zip(lat, load)]
                drop = total.index(max(total))  # numpy argmax: first maximum
                lat = lat[:drop] + lat[drop + 1 :]
                load = load[:drop] + load[drop + 1 :]
                s.add_latency(
                    hw, model, rows, [to_us(x, 1e3) for x in lat], [to_us(x, 1e3) for x in load]
                )
    return s


INFADAPTER_ACC = {18: 69.758, 34: 73.314, 50: 76.13, 101: 77.374, 152: 78.312}
INFADAPTER_LOAD_S = {18: 6.44, 34: 6.79, 50: 6.82, 101: 7.77, 152: 8.52}
MEM_RE = re.compile(r"(\d+(?:\.\d+)?)G")


def convert_infadapter(ds):
    path = os.path.join(ds, "infadapter", "capacity_result_Feb_21.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    prov = (
        f"source=datasets/infadapter/capacity_result_Feb_21.csv + README (accuracies, load "
        f"times); repo={INFADAPTER_REPO}; tool={TOOL}; hardware cpu-<N>c = N CPU cores "
        "(price 0: InfAdapter costs cores, not instances); latency = ONE sample, the measured "
        "p99 (ms->us) at SLA 750 ms, or at the next larger SLA where that cell is empty; "
        "capacity records keep every (SLA, p99, capacity, saturation) row; variant memory = "
        "the container limit MEM"
    )
    s = Suite("infadapter-resnet", prov)
    s.tasks.append(("image", 750000, "input", "FP32", [-1, 224, 224, 3]))
    archs = sorted({int(r["ARCH"]) for r in rows})
    cores = sorted({int(r["CPU"]) for r in rows})
    for c in cores:
        s.hardware.append((f"cpu-{c}c", 0, c, 0))
    for a in archs:
        mems = {r["MEM"] for r in rows if int(r["ARCH"]) == a}
        if len(mems) != 1:
            fail(f"resnet{a}: several MEM values {mems}")
        mem_mb = float(MEM_RE.fullmatch(mems.pop()).group(1)) * 1024
        s.variants.append((f"resnet{a}", "image", INFADAPTER_ACC[a], mem_mb,
                           to_us(INFADAPTER_LOAD_S[a], 1e6)))
    by_key = {}
    for r in rows:
        if r["REPLICA"] != "1" or r["BATCH"] != "1":
            fail(f"unexpected row {r}")
        by_key.setdefault((int(r["CPU"]), int(r["ARCH"])), []).append(r)
    for c in cores:
        for a in archs:
            group = sorted(by_key[(c, a)], key=lambda r: int(r["SLA"]))
            p99 = {int(r["SLA"]): r["p99_latency"] for r in group}
            order = [750] + [x for x in sorted(p99) if x > 750] + [x for x in sorted(p99) if x < 750]
            chosen = next((p99[x] for x in order if p99[x]), None)
            if chosen is None:
                fail(f"cpu {c} resnet{a}: no p99 at any SLA")
            s.add_latency(f"cpu-{c}c", f"resnet{a}", 1, [to_us(float(chosen), 1e3)])
            for r in group:
                p = to_us(float(r["p99_latency"]), 1e3) if r["p99_latency"] else None
                s.capacity.append((f"cpu-{c}c", f"resnet{a}", int(r["SLA"]) * 1000, p,
                                   float(r["capacity"]), float(r["saturation_tp"])))
    return s


def write_traces(ds, out_dir):
    tdir = os.path.join(out_dir, "traces")
    os.makedirs(tdir, exist_ok=True)
    src = os.path.join(ds, "ramsis", "twitter_04_25_norm.txt")
    with open(src) as f:
        body = f.read()
    if not body.endswith("\n"):
        body += "\n"
    head = (
        f"# provenance: datasets/ramsis/twitter_04_25_norm.txt; repo={RAMSIS_REPO}; "
        f"tool={TOOL}; lines '<seconds> <value>', one per 10 s; value/1e6 = queries per us "
        "(1850 = 1,850 QPS)\n"
    )
    write_text(os.path.join(tdir, "twitter_04_25_norm.txt"), head + body)

    with open(os.path.join(ds, "infadapter", "twitter_rps_per_second.txt")) as f:
        rps = [int(x) for x in f.read().split()]
    day = 86400
    windows = [
        ("twitter_rps_day15_82-103min.txt", 15 * day + 82 * 60, 15 * day + 103 * 60,
         "the InfAdapter paper's experiment window [15 d + 82 min, 15 d + 103 min)"),
        ("twitter_rps_day15.txt", 15 * day, 16 * day, "day 15 [15 d, 16 d)"),
    ]
    for name, start, end, what in windows:
        if end > len(rps):
            fail(f"trace has {len(rps)} seconds, need {end}")
        head = (
            f"# provenance: datasets/infadapter/twitter_rps_per_second.txt seconds "
            f"[{start}, {end}) = {what}; repo={INFADAPTER_REPO}; tool={TOOL}; one integer "
            "per line = requests in that second (RPS), first line = second 0 of the window\n"
        )
        write_text(os.path.join(tdir, name), head + "".join(f"{x}\n" for x in rps[start:end]))


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="?",
                    default=os.path.join(REPO_ROOT, "..", "shared", "datasets"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "profiles"))
    args = ap.parse_args()
    ds = os.path.normpath(args.datasets)
    if not os.path.isdir(ds):
        fail(f"datasets directory {ds} not found")
    os.makedirs(args.out, exist_ok=True)
    image_in = ("input", "FP32", [-1, 3, 224, 224])
    text_in = ("input_ids", "INT64", [-1, -1])
    convert_ramsis(ds, "image", "ramsis-image", "image", 150, image_in).write(
        os.path.join(args.out, "ramsis-image.prof"))
    convert_ramsis(ds, "text", "ramsis-text", "text", 100, text_in).write(
        os.path.join(args.out, "ramsis-text.prof"))
    convert_kairos(ds).write(os.path.join(args.out, "kairos-recsys.prof"))
    convert_infadapter(ds).write(os.path.join(args.out, "infadapter-resnet.prof"))
    write_traces(ds, args.out)
    lic = os.path.join(ds, "kairos", "LICENSE")
    with open(lic) as f:
        write_text(os.path.join(args.out, "LICENSE.kairos"), f.read())


if __name__ == "__main__":
    main()
