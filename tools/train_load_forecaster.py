#!/usr/bin/python3
"""Trains InfAdapter's load forecaster (issue 12; paper section 4): an LSTM that takes the
per-second arrival rates of the past 10 minutes and predicts the largest per-second rate
of the next minute. Exported as TorchScript for `forecaster: lstm` (LibTorch in sloserve).

Data: the Twitter per-second trace (../shared/datasets/infadapter/twitter_rps_per_second.txt,
~22 days). Trained on days [0, TRAIN_DAYS) only (default 14; the last of them for early
stopping); the evaluation days -- day 14 on, which hold the paper's bursty and non-bursty
windows (day 15) -- are never read here. `sloserve forecast eval` compares it with the
baselines on those held-out days.

Model: the 600 past seconds as 60 steps of 10 seconds each (every per-second value is an
input), scaled by 1/100; one LSTM layer (HIDDEN units) and a linear head on the last
state giving the next minute's maximum relative to the last minute's maximum (a log
ratio), so the output is in requests/s. Samples every 10 s; loss: mean absolute error of
the log ratio plus an extra weight on under-prediction (an under-provisioned minute
violates the SLO; an over-provisioned one only costs cores).

Needs Debian's python3-torch (not a build package).
  tools/train_load_forecaster.py --trace PATH [--out models/forecast/twitter_lstm.pt]
Deterministic for a given torch build: fixed seeds, one thread. A few minutes on one core.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn

HISTORY_S = 600
STEP_S = 10
HORIZON_S = 60
DAY_S = 86400


class LoadLstm(nn.Module):
    # Trace seconds [train_begin_s, train_end_s) the weights were fitted on (validation
    # included): sloserve checks a scored or replayed range against them.
    train_begin_s: int
    train_end_s: int

    def __init__(self, hidden, train_begin_s, train_end_s):
        super().__init__()
        self.train_begin_s = train_begin_s
        self.train_end_s = train_end_s
        self.lstm = nn.LSTM(input_size=STEP_S, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, rates):
        # rates: [batch, 600] requests/s of the past 600 seconds, oldest first.
        # (TorchScript does not read module globals: 60 steps x 10 s = HISTORY_S.)
        x = rates.reshape(rates.shape[0], 60, 10) / 100.0
        out, _ = self.lstm(x)
        log_ratio = self.head(out[:, -1, :]).squeeze(1)
        last_max = torch.clamp(rates[:, -60:].max(dim=1).values, min=1.0)
        return last_max * torch.exp(log_ratio)


def samples(trace, begin, end, stride):
    """(history [n, 600], next-minute max [n]) for windows fully inside [begin, end)."""
    starts = np.arange(begin + HISTORY_S, end - HORIZON_S + 1, stride)
    idx = starts[:, None] + np.arange(-HISTORY_S, 0)[None, :]
    hist = trace[idx]
    fut = trace[starts[:, None] + np.arange(HORIZON_S)[None, :]].max(axis=1)
    return torch.tensor(hist, dtype=torch.float32), torch.tensor(fut, dtype=torch.float32)


def loss_fn(pred, target, under_weight):
    err = torch.log(pred) - torch.log(torch.clamp(target, min=1.0))
    return torch.mean(torch.where(err < 0, -under_weight * err, err))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", required=True, help="twitter_rps_per_second.txt")
    ap.add_argument("--out", default="models/forecast/twitter_lstm.pt")
    ap.add_argument("--train-days", type=int, default=14)
    ap.add_argument("--hidden", type=int, default=25)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--under-weight", type=float, default=2.0)
    args = ap.parse_args()
    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_num_threads(1)

    # Only the training days are read (the file is per-second, one value per line).
    limit = args.train_days * DAY_S
    values = []
    with open(args.trace) as f:
        for line in f:
            for tok in line.split():
                values.append(float(tok))
            if len(values) >= limit:
                break
    trace = np.asarray(values[:limit], dtype=np.float32)
    if len(trace) < limit:
        raise SystemExit(f"{args.trace}: {len(trace)} seconds, fewer than {args.train_days} days")
    val_begin = (args.train_days - 1) * DAY_S
    xs, ys = samples(trace, 0, val_begin, STEP_S)
    xv, yv = samples(trace, val_begin, limit, 60)
    print(f"train: {len(xs)} windows (days 0..{args.train_days - 2}), "
          f"validation: {len(xv)} (day {args.train_days - 1})")

    model = LoadLstm(args.hidden, 0, limit)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    best, best_state = float("inf"), None
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xs))
        for i in range(0, len(xs), 256):
            b = perm[i:i + 256]
            opt.zero_grad()
            loss = loss_fn(model(xs[b]), ys[b], args.under_weight)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            pv = model(xv)
            vloss = loss_fn(pv, yv, args.under_weight).item()
            mape = torch.mean(torch.abs(pv - yv) / torch.clamp(yv, min=1.0)).item()
            under = torch.mean((pv < yv).float()).item()
        print(f"epoch {epoch + 1}: validation loss {vloss:.4f}, MAPE {100 * mape:.2f}%, "
              f"under-predicted {100 * under:.1f}% ({time.time() - t0:.0f} s)")
        if vloss < best:
            best = vloss
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    model.eval()
    torch.save(best_state, args.out + ".state")  # kept if scripting fails; removed below
    scripted = torch.jit.script(model)
    scripted.save(args.out)
    os.remove(args.out + ".state")
    print(f"wrote {args.out} ({sum(p.numel() for p in model.parameters())} parameters, "
          f"best validation loss {best:.4f})")


if __name__ == "__main__":
    main()
