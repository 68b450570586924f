"""Run the MLPerf Tiny anchor models on QEMU with --profile and keep each op's instructions by class (the
input of bench/cycle_estimate.py), plus the cost of the class counting: the same --profile run with and
without QEMU's block log, side by side in wall and CPU seconds, medians of alternated pairs (issue 43:
at most 2x on ds_cnn). Never asserted.

    .venv/bin/python bench/cycle_runs.py --et-root PATH [--cmsis-nn PATH] [--cpus m4,m33,m55]
        [--models ds_cnn,mobilenet_v1_025,resnet8,deep_autoencoder] [--out $TMPDIR/cmlens-cycle-runs.json]
        [--cost-only] [--repeat 3]

Without a checkout: "skipped" and exit 0."""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_OUT = Path(os.environ.get("TMPDIR", "/tmp")) / "cmlens-cycle-runs.json"   # input of cycle_estimate.py


def run_profile(model: str, cpu: str, args: argparse.Namespace, classes: bool) -> tuple[dict, float]:
    """(the run's profile as a dict, wall seconds of the whole Job) for the Job `cmlens run --profile` submits."""
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    job = Job(model, LowerRequest(target=cpu), steps=("run",),
              run=RunOptions(target=cpu, profile=True, classes=classes, timeout=1800, et_root=args.et_root,
                             cmsis_nn=args.cmsis_nn))
    t, cpu = time.monotonic(), _cpu()
    done = execute_job(job)
    wall = time.monotonic() - t
    cpu_s = _cpu() - cpu
    done.raise_error()
    run = done.run
    prof = run.profile.to_dict() if run.profile is not None else None
    return {"outcome": run.outcome, "profile": prof, "timings": run.timings, "wall_s": wall, "cpu_s": cpu_s}, wall


def _cpu() -> float:
    """CPU seconds of this process (all threads: the log reader) and its waited-for children (QEMU,
    objdump): unlike the wall, this does not move with the other jobs on a shared machine."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-root", default=os.environ.get("EXECUTORCH_ROOT"))
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMSIS_NN_PATH"))
    ap.add_argument("--cpus", default="m4,m33,m55")
    ap.add_argument("--models", default="ds_cnn,mobilenet_v1_025,resnet8,deep_autoencoder")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cost-only", action="store_true", help="only the with/without-log cost on ds_cnn")
    ap.add_argument("--skip-cost", action="store_true", help="no with/without-log cost runs")
    ap.add_argument("--repeat", type=int, default=3, help="plain/classes pairs per core (medians printed)")
    args = ap.parse_args(argv)
    if not args.et_root:
        print("skipped: no ExecuTorch checkout (pass --et-root)")
        return 0
    from app.cli.profile import parse_cpus

    cpus = parse_cpus(args.cpus)
    out = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": {}, "cost": []}
    print("cost of the class counting (ds_cnn, --profile, lowering and build cached; wall of the whole Job):")
    for cpu in ([] if args.skip_cost else cpus[:2]):
        run_profile("ds_cnn", cpu, args, False)                     # warm: lowering + runner cached
        run_profile("ds_cnn", cpu, args, True)                      # warm: the ELF's disassembly cached
        pairs = [(run_profile("ds_cnn", cpu, args, False)[0], run_profile("ds_cnn", cpu, args, True)[0])
                 for _ in range(args.repeat)]                       # alternated: both see the same load
        def med(f, pairs=pairs):
            return statistics.median(f(p, c) for p, c in pairs)
        row = {"cpu": cpu, "repeat": args.repeat,
               "plain_s": med(lambda p, c: p["wall_s"]), "classes_s": med(lambda p, c: c["wall_s"]),
               "plain_cpu_s": med(lambda p, c: p["cpu_s"]), "classes_cpu_s": med(lambda p, c: c["cpu_s"]),
               "plain_run_s": med(lambda p, c: p["timings"].get("run_s") or 0),
               "classes_run_s": med(lambda p, c: c["timings"].get("run_s") or 0),
               "parse_s": med(lambda p, c: c["timings"].get("classes_s") or 0)}
        out["cost"].append(row)
        print(f"  {cpu} (median of {args.repeat}): wall plain {row['plain_s']:.2f} s, with classes "
              f"{row['classes_s']:.2f} s (x{row['classes_s'] / row['plain_s']:.2f}); CPU plain "
              f"{row['plain_cpu_s']:.2f} s, with classes {row['classes_cpu_s']:.2f} s "
              f"(x{row['classes_cpu_s'] / row['plain_cpu_s']:.2f}); QEMU {row['plain_run_s']:.2f} s -> "
              f"{row['classes_run_s']:.2f} s, log parse after the run {row['parse_s']:.2f} s", flush=True)
    if not args.cost_only:
        for model in [m.strip() for m in args.models.split(",") if m.strip()]:
            for cpu in cpus:
                print(f"running {model} on {cpu} ...", flush=True)
                try:
                    res = run_profile(model, cpu, args, True)[0]
                except Exception as exc:  # noqa: BLE001  one failed pair must not lose the others
                    print(f"  {type(exc).__name__}: {exc}")
                    continue
                out["runs"][f"{model}@{cpu}"] = res
                p = res["profile"] or {}
                print(f"  {res['outcome']}: {p.get('ops_total')} kernel instructions", flush=True)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(out, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
