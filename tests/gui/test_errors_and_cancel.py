"""Bad input and failing passes show the error panel (window stays usable); Cancel kills the
worker process at once."""
from __future__ import annotations

import os

from tests.helpers.gui import lower_and_wait, wait_scene


def test_broken_model_file_shows_error_panel_and_window_stays_usable(qtbot, window, tmp_path) -> None:
    bad = tmp_path / "broken_model.py"
    bad.write_text("import torch\n\ndef get_model(:\n    return torch.nn.Linear(2, 2)\n")
    status = lower_and_wait(qtbot, window, str(bad))
    assert status in ("error", "failed")
    panel = window.error_panel
    assert panel.isVisible()
    assert "broken_model" in panel.title.text() or "SyntaxError" in panel.title.text() \
        or "syntax" in panel.title.text().lower()
    assert window.model_bar.lower_btn.isEnabled()
    # the window is still usable: lower a good model next
    assert lower_and_wait(qtbot, window, "layernorm_mlp") == "done"
    assert not panel.isVisible()
    wait_scene(qtbot, window)


def test_failing_pass_keeps_earlier_stages_browsable(qtbot, window) -> None:
    """With "keep going" off (plain ExecuTorch's behaviour): the failure is told on the op the user wrote
    (its line, module, operands, ExecuTorch's check) and that op is selected in the last good stage."""
    window.model_bar.keep_going.setChecked(False)
    status = lower_and_wait(qtbot, window, "maxpool_ceil", flow="explicit")
    window.model_bar.keep_going.setChecked(True)
    assert status == "failed"
    err = window.error_panel.error
    assert window.error_panel.isVisible() and err["node"] == "aten_max_pool2d_default"
    assert "NHWC-eligible" in err["message"] or "NHWC-eligible" in (err.get("hint") or "")
    shown = window.error_panel.title.text()
    assert "op you wrote: aten.max_pool2d.default" in shown and "teaching.py:" in shown and "failed check" in shown
    failure = err["failure"]
    assert window.state.stage == window.session.stage_index(failure["last_good_stage"])
    assert window.state.selected == failure["last_good_node"]
    s = window.session
    assert [x.stage for x in s.snapshots][:3] == ["float export", "quantized", "edge"]
    window.state.set_stage(s.stage_index("edge"))
    wait_scene(qtbot, window, s.stage_index("edge"))
    assert window.graph.current_scene().snapshot.stage == "edge"


def test_cancel_stops_a_running_lowering(qtbot, window, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CMLENS_CACHE", str(tmp_path / "cold"))       # a cold, slow run
    with qtbot.waitSignal(window.session.statusText, timeout=60_000):
        window.open_model("ds_cnn")
    pid = window.session.worker.process_id()
    assert pid > 0 and window.model_bar.cancel_btn.isEnabled()
    with qtbot.waitSignal(window.session.finished, timeout=10_000) as blocker:
        window.model_bar.cancel_btn.click()
    assert blocker.args == ["cancelled"]
    assert window.model_bar.lower_btn.isEnabled()
    qtbot.waitUntil(lambda: not window.session.worker.has_processes(), timeout=10_000)

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    qtbot.waitUntil(gone, timeout=10_000)
    assert window.session.status == "cancelled"


def test_a_kept_going_lowering_says_so_above_the_fallbacks(qtbot, window) -> None:
    """"keep going" is on by default: linear(x) * torch.zeros lowers, but its CMSIS-NN mul/add would abort
    on the target, so they are left in float; the Fallbacks tab and the status bar say this is not plain
    ExecuTorch's program."""
    from pathlib import Path

    model = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "float_operand_mul.py")
    assert lower_and_wait(qtbot, window, model) == "done"
    text = window.fallbacks.summary.text()
    assert "portable fallback" in text and "NOT what plain ExecuTorch produces" in text
    assert "NOT what plain ExecuTorch produces" in window.statusBar().currentMessage()
    cats = [n.fallback.category for n in window.session.fallbacks()]
    assert cats.count("pass_failure") == 2 and "unknown" not in cats       # the mul and the add


    # Every action of the window works on that lowering, not on plain ExecuTorch's: the numerics compare
    # it (its node ids are the graph's), and exports, accuracy and Run on target lower it the same way.
    from app.accuracy.panel import evaluation_job
    from app.lowering.exporter import export_job

    shown = window.session.lowering_job
    assert export_job(shown, "pte", "/tmp/m.pte").lower == shown.lower and shown.lower.keep_going
    assert evaluation_job(shown, None, 4).lower.keep_going
    assert window.target_panel.lowering.lower.keep_going
    with qtbot.waitSignal(window.numerics.finished, timeout=240_000) as blocker:
        window.show_tab("numerics")
        window.run_numerics("2")
    assert blocker.args[0] == "done", window.error_panel.title.text()
    layers = {layer.node_id for layer in window.numerics.result().layers}
    assert layers and layers <= {n.id for n in window.session.final().nodes}
    assert {n.id for n in window.session.fallbacks() if n.fallback.category == "pass_failure"} <= layers
