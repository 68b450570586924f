"""How long it takes to know that cached ExecuTorch libraries are still up to date (issue 20): the no-op
check `cmlens run` now does on every run instead of trusting the stamp (ninja -n over the whole build
graph + the install manifest), and ensure_libraries' whole cached path around it (tool checks, stamp).
Goal: ≤ 2 s. Printed, never asserted.

With --et-root (or EXECUTORCH_ROOT) and libraries already built for --cpu there, the real checkout's build
is checked (read only: nothing is rebuilt; if ninja says something is out of date, that is printed and
nothing is built). Otherwise a tiny checkout is built once in a temporary folder with the real cmake,
ninja and arm-none-eabi-gcc (tests/helpers/fake_checkout.py) and checked.

Run: .venv/bin/python bench/noop_build_check.py [--et-root DIR --cmsis-nn DIR] [--cpu cortex-m55] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL_S = 2.0


def real_request(args: argparse.Namespace):
    from backend_core.target.toolchain.checkout import find_cmsis_nn, inspect_checkout
    from backend_core.target.build.libraries import EtLibRequest, is_built

    et_root = args.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        return None, "no checkout (no --et-root, EXECUTORCH_ROOT unset)"
    co = inspect_checkout(et_root)
    cmsis = find_cmsis_nn(args.cmsis_nn or os.environ.get("CMSIS_NN_PATH"), co)
    req = EtLibRequest(co.root, args.cpu, "Release", cmsis.path, commit=co.commit, etdump=True)
    if not is_built(req):
        return None, f"no finished library build for {args.cpu} of {co.root} in the cache ({req.root})"
    return req, f"real checkout {co.root} (commit {str(co.commit)[:12]}), {args.cpu}, build {req.root}"


def fake_request(tmp: Path):
    from backend_core.target.build.libraries import EtLibRequest, ensure_libraries
    from tests.helpers.fake_checkout import make_checkout

    et, cmsis = make_checkout(tmp)
    req = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp / "cache", jobs=2)
    t0 = time.perf_counter()
    ensure_libraries(req)
    return req, f"tiny checkout {et} (cold build {time.perf_counter() - t0:.1f} s)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--et-root", type=Path)
    ap.add_argument("--cmsis-nn", type=Path)
    ap.add_argument("--cpu", default="cortex-m55")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fake", action="store_true", help="use the tiny checkout even when a real one is there")
    args = ap.parse_args()
    from backend_core.target.build.libraries import ensure_libraries
    from backend_core.target.build.freshness import check_build

    req, what = (None, "--fake") if args.fake else real_request(args)
    tmp = None
    if req is None:
        print(f"real checkout: {what}; using a tiny checkout")
        tmp = tempfile.TemporaryDirectory(prefix="cmlens-noop-")
        req, what = fake_request(Path(tmp.name))
    print(what)
    checks, whole = [], []
    for _ in range(args.repeat):
        fresh = check_build(req.build_dir)
        checks.append(fresh.seconds)
        if not fresh.up_to_date:
            print(f"NOT up to date: {fresh.describe()} (nothing was built; run cmlens run to rebuild)")
            return 0
        t0 = time.perf_counter()
        libs = ensure_libraries(req)
        whole.append(time.perf_counter() - t0)
        assert libs.cached
    load = os.getloadavg()[0]
    med_c, med_w = statistics.median(checks), statistics.median(whole)
    print(f"ninja -n + install manifest: median {med_c:.2f} s, max {max(checks):.2f} s over {len(checks)}")
    print(f"ensure_libraries, cached path: median {med_w:.2f} s, max {max(whole):.2f} s "
          f"(goal ≤ {GOAL_S:.0f} s: {med_w / GOAL_S:.2f} of it; load average {load:.1f} on {os.cpu_count()} cores)")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
