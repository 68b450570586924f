"""QEMU run time with `-icount` (deterministic instruction counts, issue 11) vs without, side by side.

    .venv/bin/python bench/qemu_icount.py [--targets cortex-m55,cortex-m4] [--reps 5] [--elf RUNNER.elf]

Builds the kernels/ self-test (no ExecuTorch needed; it runs a fixed ~24-30 M instruction workload) for
each target, then runs it alternately with and without -icount (`--reps` each, alternating so machine
load hits both alike) and prints the median wall time of each and the ratio (goal <= 2x). `--elf` times
any firmware for the first target instead (e.g. a runner built by `cmlens run`, found under
~/.cache/cmlens/runner/). The tick counts of the icount runs are printed too, with their unit, and
checked to be identical across repetitions."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend_core.common.boards.table import board_for
from backend_core.target.build.kernels import BuildRequest, KernelBuilder
from backend_core.target.doctor.selftest import workload_ticks
from backend_core.target.judge.outcome import simulated_outcome
from backend_core.target.simulate.simulator import QemuRunner


def _time(board, elf: Path, icount: bool, timeout: float) -> tuple[float, dict[str, int], str]:
    result = QemuRunner(board, icount=icount).run(elf, timeout=timeout)
    if result.exit_code != 0:
        raise SystemExit(f"{elf} on {board.name} (icount={icount}) ended with {simulated_outcome(result)}: {result.problem}")
    return result.elapsed_s, workload_ticks(result.uart), simulated_outcome(result)


def bench_target(target: str, reps: int, elf: Path | None, build_root: Path, timeout: float) -> float:
    board = board_for(target)
    if elf is None:
        elf = KernelBuilder(BuildRequest(board, ("cmlens_selftest",), build_root=build_root)).run().elfs[
            "cmlens_selftest"]
    times: dict[bool, list[float]] = {False: [], True: []}
    ticks: list[dict[str, int]] = []
    for _ in range(reps):
        for icount in (False, True):
            secs, t, _ = _time(board, elf, icount, timeout)
            times[icount].append(secs)
            if icount:
                ticks.append(t)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    ratio = on / off
    same = all(t == ticks[0] for t in ticks)
    print(f"{target:<11} {board.name:<11} -icount shift={board.icount_shift}  "
          f"without {off:6.3f} s   with {on:6.3f} s   ratio {ratio:4.2f}x (goal <= 2x)")
    print(f"{'':<11} runs: without {', '.join(f'{s:.3f}' for s in times[False])}; "
          f"with {', '.join(f'{s:.3f}' for s in times[True])}")
    if ticks and ticks[0]:
        counts = ", ".join(f"{k} {v:,}" for k, v in ticks[0].items())
        print(f"{'':<11} ticks under -icount: {counts} instructions executed (QEMU -icount), not cycles; "
              f"identical in all {len(ticks)} runs: {same}")
    return ratio


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="cortex-m55,cortex-m4")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--elf", type=Path, help="firmware to time instead of the self-test (first target)")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    with tempfile.TemporaryDirectory(prefix="cmlens-bench-icount-") as tmp:
        ratios = [bench_target(t, args.reps, args.elf if i == 0 else None, Path(tmp), args.timeout)
                  for i, t in enumerate(targets[:1] if args.elf else targets)]
    print(f"worst ratio {max(ratios):.2f}x (goal <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
