"""An M85 MCU (ra8d1) runs on QEMU as the M55 (same Armv8.1-M + MVE code): `cmlens run --board ra8d1`
lowers for the M55, runs on mps3-an547 with ra8d1's sizes, and its estimate uses the M85 table."""
from __future__ import annotations

import argparse

import pytest

from backend_core.common.boards.resolve import resolve_run_board
from backend_core.common.errors import BadInputError


def test_ra8d1_runs_on_the_m55_board_with_its_own_sizes() -> None:
    rb = resolve_run_board("cortex-m55", "qemu", "ra8d1")
    assert rb.board.name == "mps3-an547" and rb.mcu and rb.spec.name == "ra8d1"
    with pytest.raises(BadInputError, match="QEMU has no board with a cortex-m85"):
        resolve_run_board("cortex-m85", "qemu", "ra8d1")          # an M85 lowering has no QEMU board


def test_board_ra8d1_without_target_lowers_for_the_m55_on_qemu_only() -> None:
    from app.cli.run import board_target

    assert board_target(argparse.Namespace(board="ra8d1", target=None, sim="qemu")) == "cortex-m55"
    assert board_target(argparse.Namespace(board="ra8d1", target=None, sim="fvp")) == "cortex-m85"
    assert board_target(argparse.Namespace(board="ra8d1", target="cortex-m85", sim="qemu")) == "cortex-m85"
    assert board_target(argparse.Namespace(board="stm32l4r5", target=None, sim="qemu")) == "cortex-m4"
