"""Which board a run uses: `--target` (and `--sim`) alone, a kernels/ board by name, or an MCU of
resources/boards/mcus.json on the QEMU board of its core (sized once the model's needs are known)."""
from __future__ import annotations

from ..errors import BadInputError
from .sized import qemu_base
from .table import Board


def is_mcu_board(name: str) -> bool:
    """A board of resources/boards/mcus.json (sized onto QEMU), not one of kernels/boards.json."""
    from .specs import board_named

    return not board_named(name).simulated


def run_board(name: str, target: str, sim: str, default: Board | None = None) -> Board:
    """The board a `--board NAME` run starts from: a kernels/ board itself, or for an MCU the QEMU board
    of its core (sized once the model's needs are known). BadInputError when the core is not the
    target's or the MCU has no QEMU board with its core."""
    from ..cpus import normalise_target
    from .specs import board_named
    from .table import board_by_name

    spec = board_named(name)
    cpu = normalise_target(target)
    if spec.simulated:
        board = board_by_name(spec.name)
        if board.cpu != cpu:
            raise BadInputError(f"{spec.name} has a {board.cpu}, the model is lowered for {cpu}.",
                                f"Pass --target {board.cpu} (or leave --target out with --board).")
        return board
    if sim != "qemu":
        raise BadInputError(f"An MCU's sizes ({spec.name}) run on QEMU.", "Use --sim qemu with --board.")
    base = qemu_base(spec.core)
    if base.cpu != cpu:
        raise BadInputError(f"{spec.name} has a {spec.core}, the model is lowered for {cpu}.",
                            f"Pass --target {spec.core} (or leave --target out with --board).")
    return base
