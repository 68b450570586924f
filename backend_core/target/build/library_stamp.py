"""The stamp a finished library build leaves (cmlens-libs.json: its commands, defines and timings), and
what the recorded cold builds say about the next one ("about 5-11 min"): read by the build, doctor and
the link probe."""
from __future__ import annotations

import json
from pathlib import Path

from backend_core.target.build.paths import cache_dir


STAMP = "cmlens-libs.json"


MEASURED_COLD_BUILD_S = (290, 668)     # 2 cores, load-dependent (issue 9 measurements)


def cold_builds_here(cache_root: Path | None = None) -> list[float]:
    """Seconds of every cold library build recorded in this cache (all checkouts and CPUs)."""
    base = (Path(cache_root) if cache_root is not None else cache_dir()) / "executorch"
    out = []
    for stamp in base.glob(f"*/{STAMP}"):
        try:
            s = json.loads(stamp.read_text()).get("cold_build_s")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(s, (int, float)) and s > 0:
            out.append(float(s))
    return out


def build_time_hint(cache_root: Path | None = None) -> str:
    """How long the first library build of a CPU takes: this machine's own record, else the measured range."""
    done = cold_builds_here(cache_root)
    if done:
        lo, hi = min(done) / 60, max(done) / 60
        span = f"{lo:.1f} min" if abs(hi - lo) < 0.1 else f"{lo:.1f}-{hi:.1f} min"
        return f"{span} here before ({len(done)} cold build(s) in the cache)"
    lo, hi = MEASURED_COLD_BUILD_S
    return f"about {lo / 60:.0f}-{hi / 60:.0f} min on 2 cores, measured {lo}-{hi} s; longer with fewer cores or a loaded machine"
