#!/usr/bin/python3
"""Trains sloserve's real variant family and exports it as a model repository (issue 11).

Data: scikit-learn's handwritten digits (8x8 images, pixel values 0..16, shipped inside the
Debian package python3-sklearn: nothing is downloaded). A stratified split keeps 30% as
the held-out set. Every variant takes the raw 8x8 image (FP32, [-1, 1, 8, 8]) and returns
10 class scores (FP32, [-1, 10]); scaling and upsampling happen inside the model, so a
client sends the 64 pixels as they are and the CNNs still see a 16x16 to 32x32 image.

Variants (cheap to costly): a linear model on a 4x4 pooled image, MLPs, and CNNs up to
one that takes several ms per image on one core. Each is exported as TorchScript with a
config.yaml (accuracy on the held-out set, input/output names, datatype, shapes, memory):

  OUT/digits/<variant>/model.pt
  OUT/digits/<variant>/config.yaml
  OUT/digits/heldout.json      the held-out set (labels kept for the client; loadgen --dataset)

Needs Debian's python3-torch and python3-sklearn (not the build's packages).
  tools/train_digits_family.py [--out models] [--epochs-scale 1.0]
Deterministic for a given torch build: fixed seeds, one thread.
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

TASK = "digits"


class Pooled(nn.Module):
    """Linear model on the 4x4 average-pooled image: a few µs, the least accurate."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.avg_pool2d(x / 16.0, 2)
        return self.fc(torch.flatten(x, 1))


class Mlp(nn.Module):
    def __init__(self, hidden, upsample):
        super().__init__()
        self.upsample = upsample
        side = 8 * upsample
        layers = []
        width = side * side
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, 10))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        x = x / 16.0
        if self.upsample > 1:
            x = F.interpolate(x, scale_factor=float(self.upsample), mode="bilinear",
                              align_corners=False)
        return self.net(torch.flatten(x, 1))


class Cnn(nn.Module):
    """Upsamples to (8*upsample)^2, then blocks of 3x3 convolutions with 2x2 pooling."""

    def __init__(self, channels, convs_per_block, upsample):
        super().__init__()
        self.upsample = upsample
        blocks = []
        cin = 1
        for c in channels:
            for _ in range(convs_per_block):
                blocks += [nn.Conv2d(cin, c, 3, padding=1), nn.ReLU()]
                cin = c
            blocks.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*blocks)
        self.head = nn.Linear(cin, 10)

    def forward(self, x):
        x = F.interpolate(x / 16.0, scale_factor=float(self.upsample), mode="bilinear",
                          align_corners=False)
        x = self.features(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)


# name, constructor, epochs, learning rate. Epochs are few on purpose: the family is
# meant to spread over several points of accuracy, and training must stay short on 2 cores.
VARIANTS = [
    ("pooled_linear", lambda: Pooled(), 30, 0.05),
    ("mlp_small", lambda: Mlp([8], 1), 40, 0.01),
    ("cnn_small", lambda: Cnn([8, 16], 1, 2), 40, 0.01),
    ("mlp_large", lambda: Mlp([256, 128], 2), 25, 0.002),
    ("cnn_medium", lambda: Cnn([16, 32, 64], 1, 3), 25, 0.003),
    ("cnn_large", lambda: Cnn([24, 48, 96], 2, 4), 20, 0.001),
]

def train(model, x, y, epochs, lr, seed):
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    n = x.shape[0]
    for _ in range(epochs):
        perm = torch.randperm(n)
        for i in range(0, n, 32):
            idx = perm[i:i + 32]
            opt.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
    return model


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean()) * 100.0


def ms_per_image(model, x):
    with torch.no_grad():
        one = x[:1]
        for _ in range(5):
            model(one)
        reps = 50
        t = time.perf_counter()
        for _ in range(reps):
            model(one)
        return (time.perf_counter() - t) / reps * 1e3


def write_config(path, name, acc, param_bytes):
    with open(path, "w") as f:
        f.write(
            f"# {name}: trained by tools/train_digits_family.py on scikit-learn's digits\n"
            f"name: {name}\n"
            "platform: torchscript\n"
            "model_file: model.pt\n"
            f"accuracy: {acc:.2f}   # top-1 on heldout.json, percent\n"
            "inputs:\n"
            "  - {name: input, datatype: FP32, shape: [-1, 1, 8, 8]}\n"
            "outputs:\n"
            "  - {name: scores, datatype: FP32, shape: [-1, 10]}\n"
            f"memory_bytes: {param_bytes}   # parameters and buffers\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="models", help="repository root (default: models)")
    ap.add_argument("--epochs-scale", type=float, default=1.0,
                    help="multiply every variant's epochs (e.g. 0.2 for a quick try)")
    ap.add_argument("--only", default="", help="comma-separated variant names to train")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)

    digits = load_digits()
    images = digits.images.astype(np.float32)  # 0..16
    labels = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(images, labels, test_size=0.3, random_state=0,
                                          stratify=labels)
    xtr_t = torch.from_numpy(xtr).unsqueeze(1)
    ytr_t = torch.from_numpy(ytr)
    xte_t = torch.from_numpy(xte).unsqueeze(1)
    yte_t = torch.from_numpy(yte)

    task_dir = os.path.join(args.out, TASK)
    os.makedirs(task_dir, exist_ok=True)
    with open(os.path.join(task_dir, "heldout.json"), "w") as f:
        json.dump({
            "task": TASK,
            "source": "scikit-learn load_digits, stratified 30% split, random_state=0",
            "input": {"name": "input", "datatype": "FP32", "shape": [1, 8, 8]},
            "samples": [{"label": int(l), "data": [int(v) for v in img.reshape(-1)]}
                        for img, l in zip(xte, yte)],
        }, f, separators=(",", ":"))

    only = set(filter(None, args.only.split(",")))
    for seed, (name, make, epochs, lr) in enumerate(VARIANTS):
        if only and name not in only:
            continue
        torch.manual_seed(seed)
        model = make()
        t = time.perf_counter()
        train(model, xtr_t, ytr_t, max(1, round(epochs * args.epochs_scale)), lr, seed)
        model.eval()
        acc = accuracy(model, xte_t, yte_t)
        scripted = torch.jit.script(model)
        vdir = os.path.join(task_dir, name)
        os.makedirs(vdir, exist_ok=True)
        scripted.save(os.path.join(vdir, "model.pt"))
        param_bytes = sum(p.numel() * p.element_size() for p in model.parameters()) + sum(
            b.numel() * b.element_size() for b in model.buffers())
        write_config(os.path.join(vdir, "config.yaml"), name, acc, param_bytes)
        print(f"{name}: accuracy {acc:.2f}%  {ms_per_image(scripted, xte_t):.3f} ms/image "
              f"(1 thread)  params {param_bytes} B  trained in {time.perf_counter() - t:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
