"""Streaming error metrics: accumulate sums per sample, so N inputs never have to be held in
memory at once, and pooled metrics (one SQNR over all samples, not a mean of per-sample SQNRs,
which a single near-silent sample would dominate) come out at the end."""
from __future__ import annotations

import math
from typing import Any

from backend_core.analyses.numerics.results import SQNR_CAP_DB, Histogram, Metrics


class ErrorAccumulator:
    """Σref², Σerr², Σref·test, Σtest², Σ|err|, max|err| over every added (ref, test) pair."""

    __slots__ = ("sig", "noise", "dot", "tt", "abs_sum", "max_abs", "count", "identical", "scale")

    def __init__(self, scale: float | None = None) -> None:
        self.scale = scale if scale and scale > 0 else None
        self.sig = self.noise = self.dot = self.tt = self.abs_sum = self.max_abs = 0.0
        self.count = 0
        self.identical = True

    def add(self, ref: Any, test: Any) -> None:
        """ref, test: float tensors of the same number of elements (dequantized already)."""
        import torch

        r = ref.detach().reshape(-1).to(torch.float64)
        t = test.detach().reshape(-1).to(torch.float64)
        if r.numel() != t.numel():
            raise ValueError(f"cannot compare {r.numel()} with {t.numel()} elements")
        err = t - r
        a = err.abs()
        self.sig += float(r.dot(r))
        self.noise += float(err.dot(err))
        self.dot += float(r.dot(t))
        self.tt += float(t.dot(t))
        self.abs_sum += float(a.sum())
        if a.numel():
            self.max_abs = max(self.max_abs, float(a.max()))
        self.count += r.numel()
        if self.identical and not torch.equal(r, t):
            self.identical = False

    def result(self) -> Metrics | None:
        if self.count == 0:
            return None
        return Metrics(
            sqnr_db=sqnr_db(self.sig, self.noise),
            cosine=_cosine(self.dot, self.sig, self.tt),
            max_abs=self.max_abs,
            mean_abs=self.abs_sum / self.count,
            max_lsb=self.max_abs / self.scale if self.scale else None,
            mean_lsb=self.abs_sum / self.count / self.scale if self.scale else None,
            identical=self.identical,
            count=self.count,
        )


def sqnr_db(signal_power: float, noise_power: float) -> float:
    """10·log10(signal/noise), clamped to ±SQNR_CAP_DB (identical tensors give +cap)."""
    if noise_power <= 0.0:
        return SQNR_CAP_DB
    if signal_power <= 0.0:
        return -SQNR_CAP_DB
    return max(-SQNR_CAP_DB, min(SQNR_CAP_DB, 10.0 * math.log10(signal_power / noise_power)))


def _cosine(dot: float, rr: float, tt: float) -> float:
    if rr <= 0.0 and tt <= 0.0:
        return 1.0
    if rr <= 0.0 or tt <= 0.0:
        return 0.0
    return max(-1.0, min(1.0, dot / math.sqrt(rr * tt)))


def compare(ref: Any, test: Any, scale: float | None = None) -> Metrics | None:
    """Metrics of one pair, the same computation the accumulator does (tests use it)."""
    acc = ErrorAccumulator(scale)
    acc.add(ref, test)
    return acc.result()


class IntHistogram:
    """Counts of integer levels qmin..qmax: the lowered tensor on its int8 grid."""

    def __init__(self, qmin: int, qmax: int) -> None:
        self.qmin, self.qmax = qmin, qmax
        self.counts: Any = None

    def add(self, q: Any) -> None:
        import torch

        v = q.detach().reshape(-1).to(torch.int64).clamp(self.qmin, self.qmax) - self.qmin
        c = torch.bincount(v, minlength=self.qmax - self.qmin + 1)
        self.counts = c if self.counts is None else self.counts + c

    def result(self) -> list[int] | None:
        return None if self.counts is None else [int(x) for x in self.counts.tolist()]


class FloatHistogram:
    """Float reference values; the bin range is fixed by the first sample (padded by 10 %)
    and later values outside it are counted in the edge bins."""

    def __init__(self, bins: int = 64) -> None:
        self.bins = bins
        self.lo: float | None = None
        self.hi: float | None = None
        self.counts: Any = None

    def add(self, x: Any) -> None:
        import torch

        v = x.detach().reshape(-1).to(torch.float64)
        if v.numel() == 0:
            return
        if self.lo is None or self.hi is None:
            lo, hi = float(v.min()), float(v.max())
            pad = (hi - lo) * 0.1 or max(abs(lo), 1e-12) * 0.1
            self.lo, self.hi = lo - pad, hi + pad
        c = torch.histc(v.clamp(self.lo, self.hi), bins=self.bins, min=self.lo, max=self.hi)
        self.counts = c if self.counts is None else self.counts + c

    def result(self) -> Histogram | None:
        if self.counts is None or self.lo is None or self.hi is None:
            return None
        step = (self.hi - self.lo) / self.bins
        return Histogram(tuple(self.lo + i * step for i in range(self.bins + 1)),
                         tuple(int(x) for x in self.counts.tolist()))


def top1(logits: Any) -> int | None:
    """Argmax class of a (1, C) or (C,) output; None when it is not a classifier output."""
    shape = tuple(logits.shape)
    if not logits.is_floating_point() or len(shape) not in (1, 2) or shape[-1] < 2:
        return None
    if len(shape) == 2 and shape[0] != 1:
        return None
    return int(logits.reshape(-1).argmax())
