"""`cmlens history bisect`: the first commit at which a metric changed from its value at a good commit.

Like `git bisect` and `asv find`: the good commit's value is the reference, a commit is bad when its value
differs from it (beyond a threshold, if given); the bad end is only lowered when no commit in between
was found bad, so a range of N commits costs the good end plus about log2(N) lowerings. Commits already
in the store are read, not lowered. A commit that fails to lower is bad with `failures="bad"`, else
skipped (its neighbours are tried)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.metrics import value
from backend_core.orchestration.history.trends import is_change

FOUND, NO_CHANGE, UNDECIDED = "found", "no change", "undecided"


@dataclass
class Threshold:
    amount: float
    relative: bool

    def exceeded(self, before: float, after: float) -> bool:
        d = abs(after - before)
        return d > (abs(before) * self.amount / 100.0 if self.relative else self.amount)


def parse_threshold(text: str | None) -> Threshold | None:
    """`5%` (relative to the good value) or `2048` (absolute)."""
    if not text:
        return None
    t = text.strip().lstrip("+")
    try:
        return Threshold(float(t[:-1]), True) if t.endswith("%") else Threshold(float(t), False)
    except ValueError:
        raise BadInputError(f"--threshold {text!r} is not a number or a percentage.",
                            "Write it like --threshold 5% or --threshold 2048.") from None


@dataclass
class BisectResult:
    outcome: str                               # found | no change | undecided
    metric: str
    good: Record
    first_bad: Record | None = None
    last_good: Record | None = None
    lowered: list[str] = field(default_factory=list)    # commits lowered (not read from the store)
    tested: list[str] = field(default_factory=list)     # every commit looked at, in order
    undecided: list[str] = field(default_factory=list)  # commits left between the last good and first bad
    skipped: list[str] = field(default_factory=list)    # failing commits between them (--failures skip)


def bisect(commits: list[str], metric: str, evaluate: Callable[[str], tuple[Record, bool]], *,
           threshold: Threshold | None = None, failures: str = "skip") -> BisectResult:
    """`commits`: good first, bad last, oldest first. `evaluate(commit) -> (record, lowered_now)`."""
    if len(commits) < 2:
        raise BadInputError("The good and bad commits are the same (nothing to bisect).",
                            "Give --good an ancestor of --bad.")
    seen: dict[str, Record] = {}
    res_lowered: list[str] = []
    tested: list[str] = []

    def rec(i: int) -> Record:
        c = commits[i]
        if c not in seen:
            seen[c], fresh = evaluate(c)
            tested.append(c)
            if fresh:
                res_lowered.append(c)
        return seen[c]

    good = rec(0)
    if not good.ok:
        raise BadInputError(f"The good commit {good.short} did not lower: {(good.error or {}).get('message')}",
                            "Give a --good commit that lowers.")
    ref = value(good.metrics, metric)
    if ref is None:
        known = ", ".join(sorted(good.metrics)) or "none"
        raise BadInputError(f"The metric {metric!r} is not recorded at the good commit {good.short}.",
                            f"Metrics recorded there: {known}.")

    def verdict(r: Record) -> bool | None:
        if not r.ok:
            return True if failures == "bad" else None
        v = value(r.metrics, metric)
        if v is None:
            return None
        if threshold is not None:
            return threshold.exceeded(ref, v)
        return is_change(metric, ref, v)

    lo, hi, hi_known = 0, len(commits) - 1, False
    while True:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            order = sorted(range(lo + 1, hi), key=lambda i: (abs(i - mid), i))
            decided = None
            for i in order:
                v = verdict(rec(i))
                if v is not None:
                    decided = (i, v)
                    break
            if decided is None:
                break
            i, bad = decided
            if bad:
                hi, hi_known = i, True
            else:
                lo = i
        if hi_known:
            break
        v = verdict(rec(hi))          # nothing in between was bad: is the bad end bad at all?
        if v is None:
            return BisectResult(UNDECIDED, metric, good, None, seen[commits[lo]], res_lowered, tested,
                                commits[lo + 1:hi + 1])
        if not v:
            return BisectResult(NO_CHANGE, metric, good, None, seen[commits[hi]], res_lowered, tested)
        hi_known = True
        if hi - lo <= 1:
            break
    between = commits[lo + 1:hi]
    if between and not all(c in seen and not seen[c].ok for c in between):
        return BisectResult(UNDECIDED, metric, good, seen[commits[hi]], seen[commits[lo]], res_lowered, tested,
                            commits[lo + 1:hi + 1])
    # only commits that fail to lower lie between the last good and the first bad: the first bad that lowers
    return BisectResult(FOUND, metric, good, seen[commits[hi]], seen[commits[lo]], res_lowered, tested,
                        skipped=between)
