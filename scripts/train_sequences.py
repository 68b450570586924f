"""Train the zoo's sequence models (`lstm_kws`, `cnn_gru_har`) on their synthetic tasks and save the weights.

    python scripts/train_sequences.py [--only NAME] [--out-dir backend_core/stages/models/weights] [--check]

Deterministic: torch.manual_seed(0), one CPU thread, the fixed data of backend_core/stages/models/sequences.py
(1,200 training and 300 test samples each), Adam(lr 1e-2, cosine schedule), batches of 32. Prints each
model's float test accuracy (the README quotes it) and the threshold the tests hold it to. `--check` trains
into a temporary folder and compares with the shipped weights."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BATCH = 32
LR = 1e-2


def train(name: str, seed: int = 0):
    import torch
    from torch import nn

    from backend_core.stages.models.sequences import MODELS

    m = MODELS[name]
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    x_tr, x_te, y_tr, y_te = m.split()
    model = m.untrained()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, m.epochs)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(seed)
    for _epoch in range(m.epochs):
        model.train()
        order = torch.randperm(len(x_tr), generator=g)
        for i in range(0, len(order), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            loss_fn(model(x_tr[idx]), y_tr[idx]).backward()
            opt.step()
        sched.step()
    model.eval()
    return model, accuracy(model, x_te, y_te), accuracy(model, x_tr, y_tr)


def accuracy(model, x, y) -> float:
    import torch

    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def main(argv: list[str] | None = None) -> int:
    import torch

    from backend_core.stages.models.sequences import MODELS, WEIGHTS_DIR

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(MODELS))
    ap.add_argument("--out-dir", type=Path, default=WEIGHTS_DIR)
    ap.add_argument("--check", action="store_true", help="train into a temporary folder; compare with the shipped weights")
    args = ap.parse_args(argv)
    ok = True
    for name in [args.only] if args.only else list(MODELS):
        t0 = time.perf_counter()
        model, test_acc, train_acc = train(name)
        secs = time.perf_counter() - t0
        out = (Path(tempfile.mkdtemp()) if args.check else args.out_dir) / f"{name}.pt"
        out.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), out)
        n = sum(p.numel() for p in model.parameters())
        print(f"trained {name} in {secs:.1f} s: {n:,} parameters, {out.stat().st_size:,} bytes -> {out}")
        print(f"  float accuracy: train {train_acc:.4f}, test {test_acc:.4f} (300 held-out samples); "
              f"test threshold (tests): {MODELS[name].min_float_accuracy}")
        if args.check:
            _, x_te, _, y_te = MODELS[name].split()
            print(f"  shipped weights: test {accuracy(MODELS[name].trained(), x_te, y_te):.4f}")
        ok = ok and test_acc >= MODELS[name].min_float_accuracy
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
