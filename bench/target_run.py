"""Benchmark of the target flow (issues 5, 9): cold build of the ExecuTorch libraries (read from the cache's
stamp), build + run of a second model with the libraries cached (goal <= 30 s), QEMU run time of ds_cnn,
and the --etdump transfer of the second model: base64 on the UART vs host files through semihosting
(side by side, with the ratio).

    .venv/bin/python bench/target_run.py --et-root PATH [--cmsis-nn PATH] [--target cortex-m55]

Without a checkout it prints "skipped: no ExecuTorch checkout (pass --et-root)" and exits 0 (CI has none).
The first model's runner (ds_cnn) is built if needed and timed on QEMU; the second model
(mobilenet_v1_025) is built into a fresh runner directory so its build is a real per-model build."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-root", default=os.environ.get("EXECUTORCH_ROOT"))
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMSIS_NN_PATH"))
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--first", default="ds_cnn")
    ap.add_argument("--second", default="mobilenet_v1_025")
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--runs", type=int, default=3, help="QEMU runs of the first model (median reported)")
    ap.add_argument("--no-etdump", action="store_true", help="skip the --etdump UART vs host-file comparison")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if not args.et_root:
        print("skipped: no ExecuTorch checkout (pass --et-root)")
        return 0

    from backend_core.common.errors import CmlensError
    from backend_core.target.toolchain.checkout import find_cmsis_nn, inspect_checkout
    from backend_core.target.build.libraries import EtLibRequest, read_stamp
    from backend_core.orchestration.jobs import RunOptions
    from target_job import run_model
    from backend_core.target.simulate.simulator import runner_for

    def on_line(stream: str, line: str) -> None:
        if args.verbose or stream in ("cmlens", "uart"):
            print(f"  {stream}> {line}" if stream != "cmlens" else f"  {line}", flush=True)

    try:
        co = inspect_checkout(args.et_root)
        cmsis = find_cmsis_nn(args.cmsis_nn, co)
        opts = RunOptions(target=args.target, cache_root=args.cache_dir)
        print(f"checkout {co.root} (version {co.version}, commit {co.commit}), target {args.target}")

        first = run_model(args.first, et_root=co.root, cmsis_nn=cmsis.path, options=opts, on_line=on_line)
        libs = EtLibRequest(co.root, first.board.cpu, opts.build_type, cmsis.path, cache_root=args.cache_dir,
                            commit=co.commit)
        stamp = read_stamp(libs) or {}
        cold = stamp.get("cold_build_s")
        print("\n== cold build of the ExecuTorch libraries ==")
        if cold is not None:
            print(f"{cold:.1f} s (configure {stamp.get('configure_s')} s + build; recorded "
                  f"{stamp.get('finished')} in {libs.stamp})")
        else:
            print("no recorded timing in the cache")

        times = []
        sim = runner_for(first.board)
        for _ in range(max(1, args.runs)):
            r = sim.run(first.elf, timeout=opts.timeout)
            times.append(r.elapsed_s)
        times.sort()
        print(f"\n== QEMU run of {args.first} on {first.board.name} ==")
        print(f"{first.outcome}; median {times[len(times) // 2]:.3f} s over {len(times)} runs "
              f"(min {times[0]:.3f}, max {times[-1]:.3f}); wall clock incl. QEMU start-up")

        with tempfile.TemporaryDirectory(prefix="cmlens-bench-") as tmp:
            start = time.monotonic()
            # a fresh runner directory: a real per-model runner build against the cached libraries
            opts2 = RunOptions(target=args.target, cache_root=args.cache_dir, runner_root=Path(tmp))
            second = run_model(args.second, et_root=co.root, cmsis_nn=cmsis.path, options=opts2,
                               on_line=on_line)
            total = time.monotonic() - start
        t = second.timings
        build_run = t.get("runner_configure_s", 0) + t.get("runner_build_s", 0) + t.get("run_s", 0)
        print(f"\n== build + run of a second model ({args.second}), libraries cached ==")
        print(f"{second.outcome}; runner configure {t.get('runner_configure_s', 0):.1f} s + build "
              f"{t.get('runner_build_s', 0):.1f} s + run {t.get('run_s', 0):.2f} s = {build_run:.1f} s "
              f"(goal <= 30 s: {'met' if build_run <= 30 else 'MISSED'}); lowering {t.get('lower_s', 0):.1f} s; "
              f"end to end {total:.1f} s")
        if not args.no_etdump:
            etdump_transfer(args, co, cmsis, on_line)
    except CmlensError as exc:
        print(f"error: {exc.user_text()}", file=sys.stderr)
        return exc.exit_code
    return 0


def etdump_transfer(args, co, cmsis, on_line) -> None:
    """The second model with --etdump twice: the ETDump + debug buffer as base64 on the UART (what a board
    or the FVP does), then written to host files through semihosting (cmlens run's QEMU default)."""
    from backend_core.orchestration.jobs import RunOptions
    from target_job import run_model

    runs = {}
    for label, uart in (("UART base64", True), ("semihosting host files", False)):
        opts = RunOptions(target=args.target, cache_root=args.cache_dir, etdump=True, etdump_uart=uart,
                          timeout=600)
        r = run_model(args.second, et_root=co.root, cmsis_nn=cmsis.path, options=opts, on_line=on_line)
        size = sum(p.stat().st_size for n, p in r.files.items() if n in ("etdump.bin", "debug_buffer.bin"))
        runs[label] = (r.outcome, r.timings.get("run_s", 0.0), size)
    print(f"\n== --etdump run of {args.second}: ETDump + debug buffer transfer ==")
    for label, (outcome, run_s, size) in runs.items():
        print(f"{label:24s} {outcome:5s} run {run_s:7.2f} s  ({size:,} bytes of ETDump + debug buffer)")
    (_, uart_s, _), (_, host_s, _) = runs.values()
    print(f"ratio UART / host files: {uart_s / host_s:.1f}x" if host_s else "ratio: n/a")


if __name__ == "__main__":
    sys.exit(main())
