"""The numbers an accuracy report carries, as plain functions of outputs and labels (tested on tiny
handmade cases): top-k, agreement, per-class accuracy, confusion matrices, ST Edge AI `validate`'s output
metrics (RMSE, MAE, L2 relative error, cosine: a user can compare them with ST's), reconstruction error
and the anomaly AUC. Pooled over samples, never a mean of per-sample ratios (a near-silent sample would
dominate it)."""
from __future__ import annotations

import math
from typing import Any, Sequence

from backend_core.analyses.numerics.metrics import ErrorAccumulator


def topk(logits: Any, k: int) -> list[int]:
    """The k best classes of one (1, C) or (C,) output, best first (ties: lower index first)."""
    flat = [float(v) for v in logits.reshape(-1).tolist()]
    return sorted(range(len(flat)), key=lambda i: (-flat[i], i))[:k]


def classification(logits: Sequence[Any], labels: Sequence[int], n_classes: int,
                   reference: Sequence[int] | None = None) -> dict[str, Any]:
    """top-1 / top-5 accuracy, agreement of top-1 with `reference` (float's predictions), per-class accuracy
    and the confusion matrix (rows: true class, columns: predicted) of one model over the samples."""
    preds = [topk(x, 1)[0] for x in logits]
    n = len(preds)
    k5 = min(5, n_classes)
    top5 = sum(1 for x, y in zip(logits, labels) if y in topk(x, k5))
    conf = [[0] * n_classes for _ in range(n_classes)]
    for p, y in zip(preds, labels):
        conf[y][p] += 1
    per_class = {str(c): (conf[c][c] / sum(conf[c]) if sum(conf[c]) else None) for c in range(n_classes)}
    out: dict[str, Any] = {
        "top1": sum(1 for p, y in zip(preds, labels) if p == y) / n if n else None,
        "top5": top5 / n if n else None, "topk": k5,
        "correct": sum(1 for p, y in zip(preds, labels) if p == y), "n": n,
        "per_class": per_class, "confusion": conf, "predictions": preds,
    }
    if reference is not None:
        out["agreement"] = sum(1 for p, r in zip(preds, reference) if p == r) / n if n else None
    return out


def output_errors(ref: Sequence[Any], test: Sequence[Any]) -> dict[str, float | None]:
    """ST's metrics of `test` against `ref` over every sample's tensor: RMSE, MAE, L2 relative error
    (||test - ref|| / ||ref||), cosine; with the SQNR and max abs error of backend_core.analyses.numerics."""
    acc = ErrorAccumulator()
    for r, t in zip(ref, test):
        acc.add(r.float(), t.float())
    m = acc.result()
    if m is None:
        return {"rmse": None, "mae": None, "l2_relative": None, "cosine": None, "sqnr_db": None, "max_abs": None}
    return {"rmse": math.sqrt(acc.noise / acc.count), "mae": acc.abs_sum / acc.count,
            "l2_relative": math.sqrt(acc.noise / acc.sig) if acc.sig > 0 else None,
            "cosine": m.cosine, "sqnr_db": m.sqnr_db, "max_abs": m.max_abs}


def reconstruction_errors(outputs: Sequence[Any], targets: Sequence[Any]) -> list[float]:
    """Per sample, mean squared error of the output against its target (an autoencoder's input)."""
    return [float(((o.float().reshape(-1) - t.float().reshape(-1)) ** 2).mean()) for o, t in zip(outputs, targets)]


def auc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """Area under the ROC curve of `scores` ranking the positives (anomalies) above the rest: the
    Mann-Whitney U statistic with ties counted one half. None without both kinds of sample."""
    pos = [s for s, p in zip(scores, positives) if p]
    neg = [s for s, p in zip(scores, positives) if not p]
    if not pos or not neg:
        return None
    ranked = sorted(scores)
    rank: dict[float, float] = {}
    i = 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and ranked[j + 1] == ranked[i]:
            j += 1
        rank[ranked[i]] = (i + j) / 2 + 1          # average rank of a tie, 1-based
        i = j + 1
    u = sum(rank[s] for s in pos) - len(pos) * (len(pos) + 1) / 2
    return u / (len(pos) * len(neg))


def margin(logits: Any) -> float:
    """Top-1 minus top-2 logit: how close a prediction is to flipping."""
    flat = sorted((float(v) for v in logits.reshape(-1).tolist()), reverse=True)
    return flat[0] - flat[1] if len(flat) > 1 else math.inf
