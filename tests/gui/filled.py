"""A main window filled with real results, for the layout tests and the docs screenshots
(scripts/gui_screenshots.py): a model lowered by the real worker (its memory report comes with it), its
numerics run by the real numerics worker, and a Run-on-target result made the way `cmlens run --json-file`
makes it (ModelRunResult.to_dict) from the UART text of real QEMU runs recorded in tests/fixtures/uart
and tests/profile/fixtures:
- ds_cnn: the `--json-file` of a real `cmlens run ds_cnn --etdump --profile` on QEMU M55, stored as it came
  (tests/gui/fixtures/ds_cnn_m55_qemu_run.json: PASS bit-exact, 12 layers' gaps, the per-op profile);
- layernorm_mlp: the stock ExecuTorch runner with -icount and an ETDump on mps3-an547, PASS, and its
  per-op profile (uart_profile_layernorm_mlp_mps3-an547.txt + the final snapshot of that lowering).
Waiting spins a local event loop, so it works under pytest-qt and in a plain script alike.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
UART_FIXTURES = TESTS / "fixtures" / "uart"
PROFILE_FIXTURES = TESTS / "profile" / "fixtures"
LOWER_S, NUMERICS_S = 240, 240

RUN_JSON = {"ds_cnn": Path(__file__).resolve().parent / "fixtures" / "ds_cnn_m55_qemu_run.json"}
RUNS = {"layernorm_mlp": PROFILE_FIXTURES / "uart_profile_layernorm_mlp_mps3-an547.txt"}


def recorded_run_result(model: str) -> dict[str, Any]:
    """The `--json-file` dict of a recorded real QEMU M55 run of `model` (see the module docstring)."""
    if model in RUN_JSON:
        return json.loads(RUN_JSON[model].read_text())
    from backend_core.common.boards.table import board_for
    from backend_core.target.build.ops import OpCheck
    from backend_core.target.judge.outcome import simulated_outcome
    from backend_core.target.simulate.simulator import SimResult
    from backend_core.target.simulate.uart import parse_uart

    try:
        from backend_core.target.judge.run_result import ModelRunResult
    except ImportError:                       # before the jobs refactor moved it
        from backend_core.target.judge.run_result import ModelRunResult

    report = parse_uart(RUNS[model].read_text())
    board = board_for("cortex-m55")
    sim = SimResult(board, [], 0, 0.63, 120.0, False, report)
    run = ModelRunResult(model, board.cpu, board, simulated_outcome(sim), 0, OpCheck(model_ops=[]), sim,
                         Path(f"{model}_runner.elf"), {"lower_s": 6.1, "runner_build_s": 3.2, "run_s": 0.63},
                         libs_cached=True)
    from backend_core.target.profile import build_profile, parse_etdump, qemu_icount
    from backend_core.common.snapshot.model import snapshot_from_dict

    final = snapshot_from_dict(json.loads((PROFILE_FIXTURES / "layernorm_mlp_m55.final.json").read_text()))
    events = parse_etdump(report.etdumps[0].files["etdump.bin"])
    run.profile = build_profile(events, final, qemu_icount(5, 32e6), model=model, target="cortex-m55")
    run.gaps_problem = "that run dumped no intermediate outputs (its ETDump has the profile only)"
    return run.to_dict()


def wait_for(signal: Any, seconds: float, start: Any = None) -> tuple[Any, ...]:
    """Run `start()`, then the event loop until `signal` fires (returns its arguments) or `seconds` pass."""
    from PySide6.QtCore import QEventLoop, QTimer

    got: list[tuple[Any, ...]] = []
    loop = QEventLoop()

    def on(*args: Any) -> None:
        got.append(args)
        loop.quit()
    signal.connect(on)
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    if start is not None:
        start()
    if not got:
        loop.exec()
    signal.disconnect(on)
    if not got:
        raise TimeoutError(f"no {signal} within {seconds:.0f} s")
    return got[0]


def spin(ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def fill_window(win: Any, model: str, inputs: str = "2") -> dict[str, Any]:
    """Lower `model`, run its numerics, show the recorded run's result; returns that result."""
    status = wait_for(win.session.finished, LOWER_S, lambda: win.open_model(model))[0]
    assert status == "done", win.error_panel.title.text()
    deadline = time.monotonic() + 60
    while not win.graph.is_showing(win.state.stage) and time.monotonic() < deadline:
        spin(50)
    assert win.memory.report is not None
    status = wait_for(win.numerics.finished, NUMERICS_S,
                      lambda: (win.show_tab("numerics"), win.run_numerics(inputs)))[0]
    assert status == "done", win.error_panel.title.text()
    result = recorded_run_result(model)
    panel = win.target_panel
    panel.result_view.show_result(result, 0)
    panel.gap_plot.set_gaps(result.get("gaps"))
    panel.runFinished.emit(result)
    spin(50)
    return result


def tab_views(win: Any) -> list[tuple[str, Any]]:
    """(name, show) for every tab of the Details dock, and every result tab of Run on target."""
    names = [n for n, w in win.links.tab_widgets.items() if win.tabs.indexOf(w) >= 0 and n != "target"]
    views = [(name, lambda n=name: win.show_tab(n)) for name in names]
    panel = win.target_panel
    for i in range(panel.tabs.count()):
        label = panel.tabs.tabText(i).split(" (")[0].lower().replace(" ", "_").replace("-", "_")
        views.append((f"target_{label}", lambda k=i: (win.show_tab("target"), panel.tabs.setCurrentIndex(k))))
    return views


def dark_palette():  # type: ignore[no-untyped-def]
    """A dark palette as a dark desktop theme gives Qt (Fusion style, so every widget follows it)."""
    from PySide6.QtGui import QColor, QPalette

    pal = QPalette()
    roles = {QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#e6e6e6",
             QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#2b2d30",
             QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#3c3f41",
             QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.ToolTipBase: "#3c3f41",
             QPalette.ColorRole.ToolTipText: "#e6e6e6", QPalette.ColorRole.Highlight: "#2f65ca",
             QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.PlaceholderText: "#8c8c8c",
             QPalette.ColorRole.Link: "#6ea8fe", QPalette.ColorRole.BrightText: "#ffffff"}
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#7a7a7a"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#7a7a7a"))
    return pal
