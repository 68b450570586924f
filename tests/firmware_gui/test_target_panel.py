"""The panel end to end with real child processes (`python -m app.cli ...`). CI has QEMU and the
Arm toolchain (the self-test runs there) but no ExecuTorch checkout: runs without one must explain."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

RUN_MS = 180_000


def finished(qtbot, panel, timeout: int = RUN_MS):
    return qtbot.waitSignal(panel.proc.exited, timeout=timeout)


def test_no_checkout_shows_doctor_findings_and_stays_usable(qtbot, panel) -> None:
    panel.set_model_source("ds_cnn", "cortex-m55", "legacy")
    assert panel.run_btn.isEnabled() and panel.et_root.text() == ""
    with finished(qtbot, panel, 60_000):
        panel.run_btn.click()                                   # no checkout: runs the doctor instead
    text = panel.doctor_view.toPlainText()
    assert "No ExecuTorch checkout set" in text
    assert "ExecuTorch" in text and "git clone" in text         # the install command, not a traceback
    assert "Traceback" not in text + panel.console.toPlainText()
    assert panel.tabs.currentWidget() is panel.doctor_view
    assert panel.run_btn.isEnabled() and panel.selftest_btn.isEnabled() and not panel.cancel_btn.isEnabled()


def test_bad_checkout_reports_exit_2(qtbot, panel, tmp_path: Path) -> None:
    panel.set_model_source("ds_cnn", "cortex-m55", "legacy")
    panel.et_root.setText(str(tmp_path / "no-such-executorch"))
    with finished(qtbot, panel) as blocker:
        panel.run()
    assert blocker.args[0] == 2
    assert panel.last_result and panel.last_result["exit_code"] == 2
    assert "ERROR (exit 2)" in panel.result_view.outcome.text()
    assert "no-such-executorch" in panel.result_view.details.toPlainText()
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=60_000)   # the doctor follows
    qtbot.waitUntil(lambda: "exit 2" in panel.doctor_view.toPlainText(), timeout=60_000)
    # remembered in QSettings for the next panel
    from app.runtime.settings import app_settings
    assert app_settings().value("target/et_root") == str(tmp_path / "no-such-executorch")


def test_selftest_streams_uart_and_passes(qtbot, panel) -> None:
    pytest.importorskip("PySide6")
    with finished(qtbot, panel) as blocker:
        panel.selftest_btn.click()
        qtbot.waitUntil(lambda: panel.cancel_btn.isEnabled(), timeout=5_000)
    assert blocker.args[0] == 0, panel.console.toPlainText()[-3000:]
    console = panel.console.toPlainText()
    assert "uart> " in console and "PASS" in console
    assert panel.result_view.outcome.text() == "PASS"
    assert "not cycle-accurate" in panel.result_view.details.toPlainText()
    assert panel.progress.value() == panel.progress.maximum()


def test_cancel_kills_the_process(qtbot, panel) -> None:
    """The hanging firmware never ends by itself: Cancel must end the process (no dangling QProcess)."""
    panel._start("selftest", ["selftest", "--firmware", "hang", "--timeout", "300"])
    qtbot.waitUntil(lambda: "uart>" in panel.console.toPlainText() or "cmlens:" in panel.console.toPlainText(),
                    timeout=RUN_MS)
    with finished(qtbot, panel, 20_000) as blocker:
        panel.cancel_btn.click()
    assert blocker.args[0] == -1
    assert not panel.is_busy() and panel.result_view.outcome.text() == "CANCELLED"


def test_gap_plot_emits_final_node_ids(qtbot, panel) -> None:
    """A recorded `--json-file` result (from a real ds_cnn-like run) drives the plot; a click on a
    point emits its final-graph node id."""
    layers = [{"index": i, "node_id": f"n{i}", "mse": float(i), "mse_real": float(i) * 1e-4,
               "mismatched": i, "numel": 10, "dtype": "torch.int8"} for i in range(3)]
    result = {"outcome": "FAIL", "exit_code": 3, "board": "mps3-an547", "simulator": "qemu",
              "tests": [{"passed": False}], "error_stats": [], "cycles": None, "faults": [],
              "gaps": {"layers": layers, "first_divergence": "n1", "identical_layers": 1}}
    panel._on_finished(1, result)
    assert panel.result_view.outcome.text() == "FAIL"
    assert "first divergence n1" in panel.result_view.details.toPlainText()
    pts = panel.gap_plot.scatter.points()
    assert [p.data() for p in pts] == ["n0", "n1", "n2"]
    with qtbot.waitSignal(panel.nodeClicked, timeout=1000) as blocker:
        panel.gap_plot._clicked(panel.gap_plot.scatter, [pts[1]])
    assert blocker.args == ["n1"]
    json.dumps(result)


@pytest.mark.skipif(not __import__("os").environ.get("CMLENS_TEST_ET_ROOT"),
                    reason="needs a real ExecuTorch checkout: set CMLENS_TEST_ET_ROOT (and CMLENS_TEST_CMSIS_NN)")
def test_real_ds_cnn_run_with_gaps(qtbot, panel) -> None:
    """The real thing (not in CI): ds_cnn lowered, built and run on QEMU M55 with an ETDump; with
    CMLENS_SCREENSHOT=path the panel is saved there (docs/screenshots/target_panel.png)."""
    import os

    panel.set_model_source("ds_cnn", "cortex-m55", "legacy")
    panel.et_root.setText(os.environ["CMLENS_TEST_ET_ROOT"])
    panel.cmsis.setText(os.environ.get("CMLENS_TEST_CMSIS_NN", ""))
    panel.etdump.setChecked(True)
    with finished(qtbot, panel, 1_800_000) as blocker:
        panel.run_btn.click()
    assert blocker.args[0] == 0, panel.console.toPlainText()[-3000:]
    assert panel.result_view.outcome.text() == "PASS"
    gaps = panel.last_result["gaps"]
    assert gaps and len(gaps["layers"]) == 12
    assert [p.data() for p in panel.gap_plot.scatter.points()][1] == "cortex_m_quantized_depthwise_conv2d_default"
    if os.environ.get("CMLENS_SCREENSHOT"):
        panel.tabs.setCurrentWidget(panel.gap_plot)
        panel.resize(1000, 820)
        qtbot.wait(200)
        panel.grab().save(os.environ["CMLENS_SCREENSHOT"])


def test_console_shows_etdump_base64_lines_abbreviated(panel) -> None:
    """A raw ETDump line reaching the console (an older CLI, or stderr) is shown abbreviated; results
    come from the JSON file, so nothing is lost."""
    import base64

    payload = base64.b64encode(bytes(118024)).decode()
    panel._on_line("stdout", f'uart> echo "{payload}" | base64 -d >debug_buffer.bin')
    text = panel.console.toPlainText()
    assert 'uart> echo "<base64, 118,024 bytes decoded>" | base64 -d >debug_buffer.bin' in text
    assert payload[:200] not in text
