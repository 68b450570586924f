"""Record the real runs the pre-flight's "will fail" rules rest on (issue 21): each rule's confirming
case and its near miss, lowered by cmlens and run on QEMU Cortex-M55 through a semihosting runner built
from the user's checkout, the UART written to tests/fixtures/uart/preflight_*.txt. The tests read those
files (CI has no checkout); rerun this when the rules, the checkout or ExecuTorch change.

    .venv/bin/python bench/preflight_fixtures.py --et-root PATH --cmsis-nn PATH [-k NAME] [--dry-run]

Prints one line per case: the UART file, what the runner did, the line that shows it."""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = "tests/preflight/models/"
UART_DIR = ROOT / "tests" / "fixtures" / "uart"


@dataclass(frozen=True)
class Case:
    fixture: str                  # tests/fixtures/uart/<fixture>
    model: str                    # model source, relative to the repo
    rule: str                     # the rule it confirms, or "" for a near miss
    without: tuple[str, ...] = ()  # operators the runner must not register (a runner that lacks a kernel)
    stock_bundle: bool = False    # bundle with ExecuTorch's stock BundledProgram (contiguous expected outputs)


CASES = (
    Case("preflight_softmax_dim_order_mps3-an547.txt", MODELS + "gate_cat_softmax.py", "dim-order-mismatch"),
    Case("preflight_cat_channels_last_mps3-an547.txt", MODELS + "cat_channels_last.py", "layout-ignored"),
    Case("preflight_cat_contiguous_pass_mps3-an547.txt", MODELS + "cat_channels_last.py:fixed", ""),
    Case("preflight_pad_channels_last_mps3-an547.txt", MODELS + "pad_channels_last.py", "pad-layout-ignored"),
    Case("preflight_pad_contiguous_pass_mps3-an547.txt", MODELS + "pad_channels_last.py:contiguous", ""),
    Case("preflight_conv3d_rank_mps3-an547.txt", MODELS + "conv3d.py", "unsupported-rank"),
    Case("preflight_conv1d_pass_mps3-an547.txt", MODELS + "conv1d.py", ""),
    Case("preflight_layer_norm_channels_last_mps3-an547.txt", MODELS + "layer_norm_cl.py", "needs-contiguous"),
    Case("preflight_layer_norm_nchw_pass_mps3-an547.txt", MODELS + "layer_norm_cl.py:nchw", ""),
    Case("preflight_avg_pool_contiguous_mps3-an547.txt", MODELS + "contiguous_mean.py", "cmsis-needs-channels-last"),
    Case("preflight_avg_pool_channels_last_pass_mps3-an547.txt", MODELS + "contiguous_mean.py:no_contiguous", ""),
    Case("preflight_channel_mean_pass_mps3-an547.txt", MODELS + "channel_mean.py", ""),
    Case("preflight_float_operand_mul_mps3-an547.txt", MODELS + "float_operand_mul.py", "cmsis-needs-int8"),
    Case("preflight_quantized_operands_mul_pass_mps3-an547.txt", MODELS + "float_operand_mul.py:near", ""),
    Case("preflight_mixed_layout_add_mps3-an547.txt", MODELS + "mixed_layout_add.py", "cmsis-ignores-dim-order"),
    Case("preflight_layouts_matched_pass_mps3-an547.txt", MODELS + "mixed_layout_add.py:near", ""),
    Case("preflight_transpose_6d_mps3-an547.txt", MODELS + "window_partition.py", "cmsis-unsupported-rank"),
    Case("preflight_transpose_4d_pass_mps3-an547.txt", MODELS + "window_partition.py:near", ""),
    Case("preflight_view_of_channels_last_mps3-an547.txt", MODELS + "view_of_channels_last.py", "view-of-channels-last"),
    Case("preflight_view_of_contiguous_pass_mps3-an547.txt", MODELS + "view_of_channels_last.py:near", ""),
    Case("preflight_int_list_arg_mps3-an547.txt", MODELS + "max_dim.py", "int-list-given-int"),
    Case("preflight_int_list_arg_pass_mps3-an547.txt", MODELS + "max_dim.py:near", ""),
    Case("preflight_missing_kernel_mps3-an547.txt", MODELS + "layer_norm_cl.py:nchw", "missing-kernel",
         without=("aten::native_layer_norm.out",)),
    Case("preflight_bundle_dim_order_mps3-an547.txt", MODELS + "gelu_upsample.py", "bundle-output-dim-order",
         stock_bundle=True),
    Case("preflight_bundle_dim_order_pass_mps3-an547.txt", MODELS + "gelu_upsample.py", ""),
)


def stock_bundle(res) -> bytes:
    """The .bpte ExecuTorch's own BundledProgram writes: expected outputs stored contiguous."""
    import torch
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    from backend_core.stages.pipeline.program_files import _executorch_manager

    pipe = res.pipeline
    with torch.no_grad():
        expected = pipe.quantized_module(*pipe.example_inputs)
    return bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(
        _executorch_manager(pipe.final_program),
        [MethodTestSuite("forward", [MethodTestCase(inputs=list(pipe.example_inputs),
                                                     expected_outputs=[expected])])])))


def lower_case(case: Case) -> tuple[bytes, list[str]]:
    from backend_core.target.build.ops import read_program_ops
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    res = lower(str(ROOT / case.model), PipelineOptions(target="cortex-m55"), use_cache=False,
                outputs=LowerOutputs(pte=True, bpte=True, edge_program=case.stock_bundle))
    if res.status != "done":
        raise SystemExit(f"{case.model}: lowering {res.status}: {res.error}")
    data = stock_bundle(res) if case.stock_bundle else res.blobs["model.bpte"]
    return data, read_program_ops(data)


def build_runner(ops: list[str], args: argparse.Namespace, log) -> tuple:
    """The checkout's libraries (the user's cache) + a semihosting runner for `ops`, built in the workdir."""
    from backend_core.common.boards.table import board_for
    from backend_core.target.toolchain.checkout import inspect_checkout
    from backend_core.target.build.libraries import EtLibRequest, ensure_libraries
    from backend_core.target.build.runner import RunnerRequest, build_runner as build

    co = inspect_checkout(args.et_root)
    board = board_for("cortex-m55", "qemu")
    libs = ensure_libraries(EtLibRequest(co.root, board.cpu, "Release", Path(args.cmsis_nn) if args.cmsis_nn else None,
                                         commit=co.commit, etdump=True))
    rb = build(RunnerRequest(board, libs, model=None, ops=ops, semihosting=True,
                             build_root=args.workdir / "runner"))
    log(f"runner with {len(ops)} ops: {rb.elf}")
    return board, rb.elf


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-root", default=os.environ.get("EXECUTORCH_ROOT"), required=False)
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMSIS_NN_PATH"))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/cmlens-preflight-fixtures"))
    ap.add_argument("-k", dest="select", default="")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--dry-run", action="store_true", help="run, print, write no fixture")
    args = ap.parse_args(argv)
    if not args.et_root:
        ap.error("--et-root (an ExecuTorch checkout) is needed to build the runner")
    from backend_core.target.simulate.semihosting import semihosting_files
    from backend_core.target.simulate.simulator import runner_for

    cases = [c for c in CASES if args.select in c.fixture or args.select in c.model]
    lowered = {c.fixture: lower_case(c) for c in cases}
    runners: dict[tuple[str, ...], tuple] = {}
    for case in cases:
        data, ops = lowered[case.fixture]
        if case.without not in runners:
            all_ops = sorted({op for d, o in lowered.values() for op in o} - set(case.without))
            runners[case.without] = build_runner(all_ops, args, print)
        board, elf = runners[case.without]
        cwd = args.workdir / Path(case.fixture).stem
        bpte = args.workdir / f"{Path(case.fixture).stem}.bpte"
        bpte.parent.mkdir(parents=True, exist_ok=True)
        bpte.write_bytes(data)
        start = time.monotonic()
        res = runner_for(board).run(elf, timeout=args.timeout, semihosting_args=semihosting_files(bpte, cwd),
                                    cwd=cwd)
        text = "".join(line.rstrip("\r\n") + "\n" for line in res.uart)
        if not args.dry_run:
            (UART_DIR / case.fixture).write_text(text)
        tests = [t.passed for t in res.report.tests]
        print(f"{case.fixture}: {case.model} ({case.rule or 'near miss'}): exit {res.exit_code}"
              f"{', ' + res.problem if res.problem else ''}, BundleIO "
              f"{tests}, {time.monotonic() - start:.1f} s, {len(res.uart)} UART lines")
        for line in res.uart:
            if any(k in line for k in ("rror", "Missing", "FAIL", "fault", "Fault", "status 0x", "strides")):
                print(f"    | {line.rstrip()[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
