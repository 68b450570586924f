"""The sizes of one run, decided before the build: an MCU's fit and the board sized to it (`--board MCU`),
the pre-flight gate, whether the runner reads the model and writes the ETDump through semihosting host
files, the ETDump debug buffer, the runner's pools and newlib's heap."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.common.boards.resolve import RunBoard
from backend_core.common.boards.table import Board
from backend_core.target.build.ops import OpCheck
from backend_core.target.build.debug_buffer import check_fits, plan_for_model
from backend_core.common.errors import BadInputError
from backend_core.target.memory.runtime import heap_for
from backend_core.target.memory.target_check import predict_for_run, run_pools
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.steps.preflight import gate
from backend_core.orchestration.jobs.target_run.program import RunProgram
from backend_core.orchestration.jobs.spec import RunOptions


@dataclass
class RunSizing:
    board: Board                     # what the firmware is built for: the run board, or an MCU's sized one
    sized: dict[str, Any] | None     # an MCU run's memory report with its fit verdict and pools
    host_files: bool                 # the model in and the ETDump out through semihosting
    debug_size: int | None           # the ETDump debug buffer (--etdump)
    prediction: dict[str, Any] | None   # memory.target_check.predict_for_run
    pools: tuple[int | None, int | None]   # method allocator pool, temp pool (bytes; None: the runner's default)
    heap: int


def _mcu_fit(model: Path, opts: RunOptions, board: RunBoard, check: OpCheck,
             emit: LineCallback) -> tuple[Board, dict[str, Any] | None]:
    """An MCU's sizes on the QEMU board of its core: the fit verdict before any build (DoesNotFitError)."""
    if not board.mcu:
        return board.board, None
    from backend_core.target.build.board_fit import plan_board_run, verdict_lines

    if opts.semihosting:
        raise BadInputError("--semihosting does not go with --board: the runner would read the model into "
                            "a host-file pool the MCU does not have.", "Drop --semihosting.")
    sized_board, sized = plan_board_run(model, board.spec, base=board.board, ops=check.model_ops,
                                        etdump=opts.etdump, refuse=opts.preflight,
                                        on_status=lambda t: emit("cmlens", t))   # DoesNotFitError: exit 2
    for line in verdict_lines(sized, board.board):
        emit("cmlens", line)
    return sized_board, sized


def size_run(source: str, program: RunProgram, opts: RunOptions, lowering: PipelineOptions, board: RunBoard,
             check: OpCheck, emit: LineCallback) -> RunSizing:
    """The run's sizes, in the order a user reads them: the fit, the pre-flight, the debug buffer, the pools."""
    model = program.model
    built_for, sized = _mcu_fit(model, opts, board, check, emit)
    if opts.preflight:       # what will fail on the target stops the run here, before any build (exit 2)
        gate(source, model, lowering, board.spec or built_for.name, emit, lowered=program.lowered)

    # --etdump on QEMU: the runner writes etdump.bin / debug_buffer.bin to host files through semihosting
    # (seconds of base64 on the UART otherwise: ~16 s for mobilenet_v1_025); FVP and boards keep the UART.
    host_files = opts.semihosting or (opts.etdump and not opts.etdump_uart and built_for.simulator == "qemu"
                                      and model.suffix == ".bpte" and sized is None)
    debug_size = None
    if opts.etdump:
        dplan = plan_for_model(model)
        check_fits(dplan, built_for, not host_files, model.stem)   # BadInputError before any build (exit 2)
        debug_size = dplan.buffer_size
        emit("cmlens", f"--etdump: {dplan.outputs} intermediate outputs, {dplan.need_bytes:,} bytes: debug buffer "
                       f"{debug_size / 2**20:.2f} MiB (the runner's default is 2 MiB); "
                       + ("written to host files through semihosting" if host_files else "sent as base64 on the UART"))

    prediction = predict_for_run(model, opts.etdump, emit, debug_size, uart_etdump=not host_files)
    pools = run_pools(prediction, opts.tight, opts.method_pool, opts.temp_pool, emit)
    if sized is not None:     # the pools the fit verdict placed (a forced size still wins)
        pools = (opts.method_pool or sized["pools"]["method"], opts.temp_pool or sized["pools"]["temp"])
        emit("cmlens", f"memory: {sized['board']['name']}: method allocator pool {pools[0]:,} B, temp pool "
                       f"{pools[1]:,} B, stack {sized['runtime']['stack']:,} B, heap {sized['runtime']['heap']:,} B")
    # newlib's heap sized to what the runner uses (ETDumpGen mallocs the ETDump), not a fixed 1 MiB
    heap = sized["runtime"]["heap"] if sized is not None else heap_for((prediction or {}).get("etdump_bytes"))
    if host_files and model.suffix != ".bpte":      # before the library build, not after it
        raise BadInputError("The semihosting runner needs a .bpte: it takes the inputs from the bundle.",
                            "Pass a model name or a .bpte, or drop --semihosting to bake the .pte in.")
    return RunSizing(built_for, sized, host_files, debug_size, prediction, pools, heap)
