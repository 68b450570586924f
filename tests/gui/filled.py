"""A main window filled with real results, for the layout tests and the docs screenshots: a model lowered
by the real worker (its memory report comes with it), its numerics run by the real numerics worker, and a
Run-on-target result made the way `cmlens run --json-file` makes it (ModelRunResult.to_dict) from the
UART text of real QEMU runs recorded in tests/fixtures/uart and tests/profile/fixtures:
- ds_cnn: the stock ExecuTorch runner on mps3-an547, BundleIO PASS (et_runner_bpte_pass_mps3-an547.txt);
- layernorm_mlp: the same runner with -icount and an ETDump, PASS, and its per-op profile
  (uart_profile_layernorm_mlp_mps3-an547.txt + the final snapshot of that lowering).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.gui import lower_and_wait, wait_scene

TESTS = Path(__file__).resolve().parents[1]
UART_FIXTURES = TESTS / "fixtures" / "uart"
PROFILE_FIXTURES = TESTS / "profile" / "fixtures"
NUMERICS_MS = 240_000

RUNS = {"ds_cnn": UART_FIXTURES / "et_runner_bpte_pass_mps3-an547.txt",
        "layernorm_mlp": PROFILE_FIXTURES / "uart_profile_layernorm_mlp_mps3-an547.txt"}
TAB_NAMES = ("fallbacks", "quantizer", "log", "numerics", "target", "memory")


def recorded_run_result(model: str) -> dict[str, Any]:
    """The `--json-file` dict of a recorded real QEMU M55 run of `model` (see the module docstring)."""
    from backend_core.firmware.boards import board_for
    from backend_core.firmware.et_ops import OpCheck
    try:
        from backend_core.firmware.run_result import ModelRunResult
    except ImportError:                       # before the jobs refactor moved it
        from backend_core.firmware.run_result import ModelRunResult
    from backend_core.firmware.simulator import SimResult
    from backend_core.firmware.uart import parse_uart

    report = parse_uart(RUNS[model].read_text())
    board = board_for("cortex-m55")
    sim = SimResult(board, [], 0, 0.63, 120.0, False, report)
    run = ModelRunResult(model, board.cpu, board, sim.outcome, 0, OpCheck(model_ops=[]), sim,
                         Path(f"{model}_runner.elf"), {"lower_s": 6.1, "runner_build_s": 3.2, "run_s": 0.63},
                         libs_cached=True)
    if model == "layernorm_mlp":
        from backend_core.profile import build_profile, parse_etdump, qemu_icount
        from backend_core.snapshot.model import snapshot_from_dict

        final = snapshot_from_dict(json.loads((PROFILE_FIXTURES / "layernorm_mlp_m55.final.json").read_text()))
        events = parse_etdump(report.etdumps[0].files["etdump.bin"])
        run.profile = build_profile(events, final, qemu_icount(5, 32e6), model=model, target="cortex-m55")
    else:
        run.gaps_problem = "the run had no ETDump (run with --etdump for per-layer gaps)"
    return run.to_dict()


def run_numerics(qtbot, win, inputs: str = "2") -> str:
    with qtbot.waitSignal(win.numerics.finished, timeout=NUMERICS_MS) as blocker:
        win.show_tab("numerics")
        win.run_numerics(inputs)
    return blocker.args[0]


def fill_window(qtbot, win, model: str) -> dict[str, Any]:
    """Lower `model`, run its numerics, show the recorded run's result; returns that result."""
    assert lower_and_wait(qtbot, win, model) == "done", win.error_panel.title.text()
    wait_scene(qtbot, win)
    assert win.memory.report is not None
    assert run_numerics(qtbot, win) == "done", win.error_panel.title.text()
    result = recorded_run_result(model)
    panel = win.target_panel
    panel.result_view.show_result(result, 0)
    panel.gap_plot.set_gaps(result.get("gaps"))
    panel.runFinished.emit(result)
    qtbot.wait(50)
    return result
