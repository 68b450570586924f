"""Which board a run uses: `--target` (and `--sim`) alone, a kernels/ board by name, or an MCU of
resources/boards/mcus.json on the QEMU board of its core (sized once the model's needs are known)."""
from __future__ import annotations

from dataclasses import dataclass

from backend_core.common.cpus import normalise_target
from backend_core.common.errors import BadInputError
from backend_core.common.boards.sized import qemu_base
from backend_core.common.boards.specs import BoardSpec, board_named
from backend_core.common.boards.table import Board, board_by_name, board_for


@dataclass(frozen=True)
class RunBoard:
    """A run's board, resolved once: the simulated board it runs on and, when the memory tables know it,
    its BoardSpec (the fit verdict's view). `mcu`: an MCU's sizes, to be laid out on `board` (sized.py)."""

    board: Board
    spec: BoardSpec | None = None
    mcu: bool = False


def resolve_run_board(target: str, sim: str = "qemu", name: str | None = None) -> RunBoard:
    """The board of a run for `target` on `sim`, or of `--board NAME`: UnsupportedTargetError when the
    simulator has no board with the CPU (checked first, as the CPU is the lowering's), BadInputError when
    the named board's core is not the target's or an MCU has no QEMU board with its core."""
    default = board_for(target, sim)
    if not name:
        try:
            return RunBoard(default, board_named(default.name))
        except BadInputError:                   # a board the memory tables do not describe: no fit check
            return RunBoard(default)
    spec = board_named(name)
    cpu = normalise_target(target)
    if spec.simulated:
        board = board_by_name(spec.name)
        if board.cpu != cpu:
            raise BadInputError(f"{spec.name} has a {board.cpu}, the model is lowered for {cpu}.",
                                f"Pass --target {board.cpu} (or leave --target out with --board).")
        return RunBoard(board, spec)
    if sim != "qemu":
        raise BadInputError(f"An MCU's sizes ({spec.name}) run on QEMU.", "Use --sim qemu with --board.")
    base = default if normalise_target(spec.core) == cpu else qemu_base(spec.core)
    if base.cpu != cpu:
        raise BadInputError(f"{spec.name} has a {spec.core}, the model is lowered for {cpu}.",
                            f"Pass --target {spec.core} (or leave --target out with --board).")
    return RunBoard(base, spec, mcu=True)

