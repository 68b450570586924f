"""A planted fault must FAIL: lower a model, flip ONE weight byte of the program inside its .bpte
after the expected outputs were computed (backend_core.target.judge.fault: a byte whose flip the host run
of the lowered program has seen change the outputs), run both bundles on QEMU, print both verdicts.

  .venv/bin/python bench/planted_fault.py ds_cnn --target cortex-m55 --et-root PATH/TO/executorch \
      --cmsis-nn PATH/TO/CMSIS-NN [--workdir DIR] [--etdump]

Exit 0 when the intact bundle PASSes and the faulted one FAILs, 1 otherwise."""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_core.orchestration.jobs.target_run.run_on_target import attach_gaps, run_on_target  # noqa: E402
from backend_core.orchestration.jobs.spec import RunOptions  # noqa: E402
from backend_core.stages.pipeline.reference_check import output_steps  # noqa: E402
from backend_core.target.build.debug_buffer import read_program  # noqa: E402
from backend_core.target.judge.fault import plant_weight_fault  # noqa: E402
from backend_core.target.judge.verdict import judge_run  # noqa: E402
from backend_core.target.judge.references import beside, read_beside  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--et-root", required=True)
    ap.add_argument("--cmsis-nn")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--etdump", action="store_true", help="also dump intermediates: the first differing layer")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="cmlens-fault-"))
    work.mkdir(parents=True, exist_ok=True)
    say = lambda s: print(f"lower: {s}", flush=True)  # noqa: E731
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    done = execute_job(Job(args.model, LowerRequest(target=args.target), steps=("lower",), keep=("etrecord",),
                       out_dir=str(work)), lambda kind, data: say(data["text"]) if kind == "status" else None)
    done.raise_error()
    rec = done.record                                      # the .bpte + ETRecord of the job's one lowering
    pipe = rec.pipeline
    intact = rec.bpte
    fault = plant_weight_fault(intact.read_bytes(), pipe.final_program, pipe.example_inputs)
    faulted = intact.with_name(intact.stem + "_fault.bpte")
    faulted.write_bytes(fault.bpte)
    shutil.copyfile(beside(intact), beside(faulted))      # the same expected outputs: the lowered program's
    print(f"planted: {fault.describe()}", flush=True)
    outcomes = {}
    for name, path in (("intact", intact), ("faulted", faulted)):
        opts = RunOptions(target=args.target, etdump=args.etdump)

        def emit(stream: str, line: str) -> None:
            if stream == "cmlens":
                print(f"  cmlens: {line}", flush=True)
        run = run_on_target(str(path), et_root=args.et_root, cmsis_nn=args.cmsis_nn, options=opts,
                            on_line=emit, workdir=work / name)
        if args.etdump:           # a ready-made .bpte has no ETRecord in the run: the one of this lowering
            attach_gaps(run, rec, "MSE", emit)
            run.verdict = judge_run(run, path, read_beside(path), output_steps(read_program(path)),
                                    atol=opts.atol, rtol=opts.rtol, etdump=True)
            run.outcome = run.verdict.outcome
        outcomes[name] = run.outcome
        print("-" * 60)
        print(f"{name}: {run.summary()}", flush=True)
    ok = outcomes == {"intact": "PASS", "faulted": "FAIL"}
    print(f"intact {outcomes['intact']}, faulted {outcomes['faulted']}: {'as expected' if ok else 'NOT as expected'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
