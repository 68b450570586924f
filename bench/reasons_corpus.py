"""ExecuTorch's Cortex-M test cases: fallback categories and time per case, the project's stepped
lowering (snapshots, diffs, reasons) vs plain ExecuTorch (export, PT2E, to_edge,
CortexMPassManager.transform()), side by side. Goal: median ratio ≤ 1.10.

Usage: python bench/reasons_corpus.py [--workers N] [--per-case] [name-filter ...]
Each case runs both flows in the same worker process, alternating which goes first.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("CMLENS_CACHE", tempfile.mkdtemp(prefix="cmlens-bench-"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("filters", nargs="*")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--per-case", action="store_true", help="print one line per case")
    args = ap.parse_args()

    from tests.corpus import et_cases
    from tests.corpus.compare import run_corpus

    names = [n for n in et_cases.case_names() if not args.filters or any(f in n for f in args.filters)]
    def line(r) -> None:  # one case, printed as it arrives
        cats = collections.Counter(f["category"] for f in r.fallbacks)
        print(f"{r.name:62s} {r.seconds:9.2f} {r.plain_seconds:8.2f} {r.seconds / max(r.plain_seconds, 1e-9):6.2f}"
              f"  {r.status:7s}{'' if r.matches else ' DIFF'}  {dict(cats) or ''}", flush=True)

    if args.per_case:
        print(f"{'case':62s} {'project s':>9s} {'plain s':>8s} {'ratio':>6s}  status   fallbacks", flush=True)
    t0 = time.perf_counter()
    results = run_corpus(names, workers=args.workers, on_result=line if args.per_case else None)
    wall = time.perf_counter() - t0

    nodes = collections.Counter()
    cases = collections.defaultdict(set)
    groups = collections.defaultdict(set)
    for r in results:
        for f in r.fallbacks:
            nodes[f["category"]] += 1
            cases[f["category"]].add(r.name)
            groups[f["category"]].add((r.name, f["group"]))
    print(f"\n{'category':24s} {'nodes':>6s} {'user ops':>8s} {'cases':>6s}")
    for cat, n in nodes.most_common():
        print(f"{cat:24s} {n:6d} {len(groups[cat]):8d} {len(cases[cat]):6d}")
    print(f"{'(cases without fallback)':24s} {'':6s} {'':8s} {sum(1 for r in results if not r.fallbacks):6d}")

    done = [r for r in results if r.status == "done" and r.plain_status == "done"]
    mp = statistics.median(r.plain_seconds for r in done)
    ms = statistics.median(r.seconds for r in done)
    ratios = [r.seconds / r.plain_seconds for r in done if r.plain_seconds > 0]
    print(f"\n{len(results)} cases ({len(et_cases.skipped())} test modules skipped: "
          + "; ".join(f"{k}: {v}" for k, v in et_cases.skipped().items()) + ")")
    print(f"status and non-cortex_m ops equal to plain ExecuTorch: {sum(r.matches for r in results)}/{len(results)}")
    for r in results:
        if not r.matches:
            print(f"  DIFF {r.name}: {r.status}/{r.plain_status} {r.error[:150]} | {r.plain_error[:150]} | "
                  f"{sorted(set(r.ops.items()) ^ set(r.plain_ops.items()))[:4]}")
    fbs = [(r.name, f) for r in results for f in r.fallbacks]
    unknown = [(n, f["id"]) for n, f in fbs if f["category"] in (None, "unknown")]
    unnamed = [(n, f["id"]) for n, f in fbs if not f["user_op"] or f["user_op"] not in f["message"]]
    print(f"fallbacks: {len(fbs)}; unknown: {len(unknown)} {unknown[:5]}; message not naming the op at "
          f"quantization time: {len(unnamed)} {unnamed[:5]}")
    print(f"median per case: project {ms:.2f} s, plain ExecuTorch {mp:.2f} s, ratio of medians "
          f"{ms / mp:.2f}, median of per-case ratios {statistics.median(ratios):.2f}   (goal ≤ 1.10)")
    print(f"total: project {sum(r.seconds for r in results):.0f} s, plain {sum(r.plain_seconds for r in results):.0f} s; "
          f"wall {wall:.0f} s with {args.workers} worker(s)")


if __name__ == "__main__":
    main()
