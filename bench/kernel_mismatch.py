"""Which of ExecuTorch's own Cortex-M test cases have a known host-vs-CMSIS-NN kernel difference
(backend_core/target/judge/kernel_refs.py), measured on the host: each case lowered by cmlens, its lowered
program run as the host reference does and with the known ops computed the target's way, per op and
per output (values off, max steps). A QEMU run of the same .bpte (`cmlens run bench/mcu_cases.py:NAME`)
confirms the target equals the target-faithful run bit for bit.

    .venv/bin/python bench/kernel_mismatch.py [-k TEXT ...] [--target cortex-m55]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def lower_pipeline(case, target: str):
    """One ExecuTorch case lowered by cmlens' pipeline (legacy flow); raises what the lowering raises."""
    from backend_core.stages.models.spec import LoadedModel, ModelSpec
    from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions

    inputs = tuple(case.obj.get_example_inputs())
    model = LoadedModel(case.id, case.obj.model.eval(), inputs, ModelSpec("python", case.id))
    pipe = LoweringPipeline(model, PipelineOptions(target=target), keep_edge_program=False)
    for _ in pipe.run():
        pass
    return pipe


def discover_in(modules: list[str]) -> list:
    """The McuTestCases of these test modules only (conformance_cases.discover imports them all)."""
    import importlib

    from conformance_cases import Case
    from executorch.backends.cortex_m.test.tester import McuTestCase

    out = []
    for short in modules:
        mod = importlib.import_module(f"executorch.backends.cortex_m.test.{short}")
        for table, value in vars(mod).items():
            if isinstance(value, dict) and value and all(isinstance(v, McuTestCase) for v in value.values()):
                out += [Case(f"{short}:{table}:{name}", short, table, name, tc) for name, tc in value.items()]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", dest="select", action="append", default=[],
                    help="case ids containing this text (repeatable; default: pools, means, models)")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--modules", default="ops.test_avg_pool2d,ops.test_mean,ops.test_nhwc_pool,models.test_nn_modules,"
                    "models.test_nn_functional,models.test_resnet8,models.test_ds_cnn,models.test_mobilenet_v1_025",
                    help="test modules to import (the mobilenet_v2/v3 ones try to download weights)")
    args = ap.parse_args()

    from backend_core.stages.pipeline.program_files import expected_outputs_from_lowered, output_steps_of
    from backend_core.target.judge.kernel_refs import has_known_ops, target_faithful_run
    from backend_core.target.judge.steps import compare_all, summary

    select = args.select or [""]
    cases = [c for c in discover_in(args.modules.split(",")) if any(s in c.id for s in select)]
    print(f"{len(cases)} cases ({', '.join(select)}) on {args.target}")
    print(f"{'case':58} {'known op':7} {'per op (host inputs)':58} outputs (faithful vs lowered)")
    for case in cases:
        t0 = time.monotonic()
        try:
            pipe = lower_pipeline(case, args.target)
        except Exception as exc:  # noqa: BLE001 - a case ExecuTorch cannot lower
            print(f"{case.id:58} not lowered: {type(exc).__name__}")
            continue
        if not has_known_ops(pipe.final_program):
            print(f"{case.id:58} {'no':7}")
            continue
        lowered = expected_outputs_from_lowered(pipe.final_program, pipe.example_inputs)
        faithful, ops = target_faithful_run(pipe.final_program, pipe.example_inputs)
        steps = output_steps_of(pipe.final_program)
        diffs = compare_all([t.numpy() for t in faithful], [t.numpy() for t in lowered], steps)
        per_op = "; ".join(m.text() for m in ops) or "bit for bit"
        print(f"{case.id:58} {'yes':7} {per_op:58} {summary(diffs)}  ({time.monotonic() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
