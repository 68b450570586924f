"""--keep-going's rounds on the third real-world wave (issue 46: "at most one round per distinct cause"):
for each corpus model of bench/realworld_models3.py, `lower --keep-going` as a Job, then the rounds it took,
the workarounds applied, the ops left in float and the pre-flight findings still open, side by side.
Needs the wave's libraries on PYTHONPATH (see that file). Prints a table; asserts nothing."""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import importlib.util

    from backend_core.orchestration.execute.inprocess import run_in_process
    from backend_core.orchestration.jobs import Job, LowerRequest

    corpus = ROOT / "bench" / "realworld_models3.py"
    names = [n for n, lib in __import__("bench.realworld_models3", fromlist=["CORPUS"]).CORPUS.items()
             if lib == "torch" or importlib.util.find_spec(lib) is not None]
    names = [n for n in names if not sys.argv[1:] or n in sys.argv[1:]]
    print(f"{'model':18s}{'status':>8s}{'rounds':>7s}{'causes':>7s}{'float ops':>10s}{'open findings':>14s}"
          f"{'s':>7s}  workarounds", flush=True)
    for name in names:
        t0 = time.perf_counter()
        res = run_in_process(Job(f"{corpus}:{name}", LowerRequest(keep_going=True), steps=("lower",)))
        low = res.lowering
        v = (low.verdicts if low is not None else {}) or {}
        rewrites = sorted(v.get("rewrites") or {})
        quarantined = v.get("quarantined") or {}
        causes = len(rewrites) + len({str(q.get("stage") or q.get("reason") or "") for q in quarantined.values()}
                                     if isinstance(quarantined, dict) else ())
        findings = list(low.preflight or []) if low is not None else []
        print(f"{name:18s}{res.status:>8s}{v.get('keep_going_rounds', '-')!s:>7s}{causes:>7d}{len(quarantined):>10d}"
              f"{len(findings):>14d}{time.perf_counter() - t0:7.0f}  {', '.join(rewrites) or '—'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
