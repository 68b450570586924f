"""Cold, warm and second-CPU builds of the ExecuTorch libraries, side by side (issue 16: a new CPU in
<= 3 min on 2 cores).

  .venv/bin/python bench/library_build.py --et-root PATH/TO/executorch --cmsis-nn PATH/TO/CMSIS-NN \
      [--cpus cortex-m4,cortex-m33] [--cache-root DIR] [--full]

Scenarios, in a private cache root (default: a fresh temporary directory; its ccache is private too):
  cold        first CPU, empty cache: configure + every library the runner links (+ host tools);
  warm        the same CPU again after its library directory was deleted: what ccache saves;
  second CPU  the next CPU in the same cache: a new CPU once the machine has built one;
  full        (--full) the first CPU with ExecuTorch's whole arm-baremetal preset, as before issue 16.
Printed per scenario: wall seconds (configure / build), ninja steps, the CPU seconds of the build
processes, the load average while it ran (a loaded machine stretches wall time; CPU seconds do not
lie about the work), and ccache's hits. The checkout is shared with every other build on this machine:
each build holds the default cache's checkout lock too (flatcc writes into the source tree)."""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_core.target.build.paths import cache_dir  # noqa: E402
from backend_core.target.build.speed import PROGRESS_STREAM, parse_progress  # noqa: E402
from backend_core.target.toolchain.checkout import find_cmsis_nn, inspect_checkout  # noqa: E402
from backend_core.target.build.libraries import EtLibRequest, ensure_libraries  # noqa: E402
from backend_core.target.build.steps import checkout_lock  # noqa: E402


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _ccache_stats(cache_root: Path) -> dict[str, int]:
    """Hits and misses of the private ccache (ccache --print-stats)."""
    if not shutil.which("ccache"):
        return {}
    env = {**os.environ, "CCACHE_DIR": str(cache_root / "ccache")}
    try:
        out = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, env=env, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    hits = sum(int(stats.get(k, 0)) for k in ("direct_cache_hit", "preprocessed_cache_hit"))
    return {"hits": hits, "misses": int(stats.get("cache_miss", 0))}


def build(label: str, req: EtLibRequest, cache_root: Path, log: Path) -> dict:
    steps = {"total": 0}
    cancel = threading.Event()

    def on_line(stream: str, line: str) -> None:
        with log.open("a") as fh:
            fh.write(f"{stream}: {line}\n")
        if stream == PROGRESS_STREAM:
            p = parse_progress(line)
            if p:
                steps["total"] = p[3]
                if p[1] % 10 == 0:
                    print(f"    {line}", flush=True)

    before_stats = _ccache_stats(cache_root)
    load0 = os.getloadavg()[0]
    shared = Path(cache_root).resolve() != cache_dir().resolve()    # else ensure_libraries takes that lock itself
    with (checkout_lock(req.et_root, cancel, lambda s, t: print(f"    {t}", flush=True)) if shared
          else contextlib.nullcontext()):                          # the machine's lock on the checkout
        cpu0, t0 = _children_cpu_s(), time.monotonic()
        libs = ensure_libraries(req, on_line=on_line, cancel_event=cancel)
        wall, cpu = time.monotonic() - t0, _children_cpu_s() - cpu0
    after = _ccache_stats(cache_root)
    row = {"scenario": label, "cpu": req.cpu, "recipe": "slim" if req.slim else "full preset",
           "configure_s": libs.configure_s, "build_s": libs.build_s, "wall_s": wall, "cpu_s": cpu,
           "steps": steps["total"], "load": (load0 + os.getloadavg()[0]) / 2,
           "ccache_hits": after.get("hits", 0) - before_stats.get("hits", 0),
           "ccache_misses": after.get("misses", 0) - before_stats.get("misses", 0)}
    print(f"  {label}: {req.cpu} {row['recipe']}: {wall:.0f} s wall (configure {libs.configure_s:.0f} s, build "
          f"{libs.build_s:.0f} s), {row['steps']} steps, {cpu:.0f} CPU-s, load {row['load']:.1f}, ccache "
          f"{row['ccache_hits']} hits / {row['ccache_misses']} misses", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--et-root", required=True)
    ap.add_argument("--cmsis-nn")
    ap.add_argument("--cpus", default="cortex-m4,cortex-m33", help="first CPU (cold, warm), second CPU")
    ap.add_argument("--cache-root", type=Path, help="default: a fresh temporary directory")
    ap.add_argument("--full", action="store_true", help="also the first CPU with the whole preset (slow)")
    args = ap.parse_args()
    first, second = (args.cpus.split(",") + [""])[:2]
    cache_root = args.cache_root or Path(tempfile.mkdtemp(prefix="cmlens-libbench-"))
    checkout = inspect_checkout(args.et_root)
    cmsis = find_cmsis_nn(args.cmsis_nn, checkout).path
    log = cache_root / "bench.log"
    cache_root.mkdir(parents=True, exist_ok=True)
    print(f"cache root {cache_root}, {os.cpu_count()} cores, log {log}", flush=True)

    def req(cpu: str, slim: bool = True) -> EtLibRequest:
        return EtLibRequest(checkout.root, cpu, "Release", cmsis, cache_root=cache_root, commit=checkout.commit,
                            slim=slim)
    rows = [build("cold", req(first), cache_root, log)]
    shutil.rmtree(req(first).root)
    rows.append(build("warm", req(first), cache_root, log))
    if second:
        rows.append(build("second CPU", req(second), cache_root, log))
    if args.full:
        rows.append(build("full", req(first, slim=False), cache_root, log))
    print()
    print(f"{'scenario':11} {'cpu':11} {'recipe':12} {'wall s':>7} {'config s':>8} {'build s':>8} {'steps':>6} "
          f"{'CPU-s':>7} {'load':>5} {'ccache hit/miss':>16}")
    for r in rows:
        print(f"{r['scenario']:11} {r['cpu']:11} {r['recipe']:12} {r['wall_s']:7.0f} {r['configure_s']:8.0f} "
              f"{r['build_s']:8.0f} {r['steps']:6d} {r['cpu_s']:7.0f} {r['load']:5.1f} "
              f"{r['ccache_hits']:>7}/{r['ccache_misses']:<8}")
    cold = rows[0]["wall_s"]
    for r in rows[1:]:
        print(f"{r['scenario']} / cold: {r['wall_s'] / cold:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
