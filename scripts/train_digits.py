"""Train the zoo's `digits_cnn` on scikit-learn's bundled handwritten digits and save its weights.

    python scripts/train_digits.py [--out backend_core/stages/models/weights/digits_cnn.pt] [--check]

Deterministic: torch.manual_seed(0), one CPU thread, the fixed stratified split of
backend_core/stages/models/digits.py (train_test_split(test_size=0.25, random_state=0, stratify=y): 1,347
training and 450 test images), Adam(lr 3e-3, cosine schedule) for 60 epochs of batches of 32 (about
8 s on one core). Prints the float test accuracy (the README quotes it) and the threshold the tests hold
it to. `--check` trains into a temporary file and compares the accuracy with the shipped weights'."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EPOCHS = 60
BATCH = 32
LR = 3e-3
# tests/accuracy asserts the shipped model's float test accuracy is at least this
MIN_FLOAT_ACCURACY = 0.95


def train(seed: int = 0):
    import torch
    from torch import nn

    from backend_core.stages.models.digits import make_model, split

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x_tr, x_te, y_tr, y_te = split()
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(seed)
    for _epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(x_tr), generator=g)
        for i in range(0, len(order), BATCH):
            idx = order[i:i + BATCH]
            xb = x_tr[idx]
            opt.zero_grad()
            loss = loss_fn(model(xb), y_tr[idx])
            loss.backward()
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

    from backend_core.stages.models.digits import WEIGHTS, split, trained_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--check", action="store_true", help="train into a temporary file; compare with the shipped weights")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    model, test_acc, train_acc = train()
    secs = time.perf_counter() - t0
    out = Path(tempfile.mkdtemp()) / "digits_cnn.pt" if args.check else args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out)
    n = sum(p.numel() for p in model.parameters())
    print(f"trained digits_cnn in {secs:.1f} s: {n:,} parameters, {out.stat().st_size:,} bytes -> {out}")
    print(f"float accuracy: train {train_acc:.4f}, test {test_acc:.4f} (450 held-out images)")
    print(f"test threshold (tests/accuracy): {MIN_FLOAT_ACCURACY}")
    if args.check:
        _, x_te, _, y_te = split()
        shipped = accuracy(trained_model(), x_te, y_te)
        same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                      torch.load(WEIGHTS, weights_only=True).values()))
        print(f"shipped weights: test {shipped:.4f}; retrained weights are {'bit-identical' if same else 'different'}")
    return 0 if test_acc >= MIN_FLOAT_ACCURACY else 1


if __name__ == "__main__":
    sys.exit(main())
