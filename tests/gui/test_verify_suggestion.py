"""The model bar's channels-last toggle and the inspector's "Verify suggestion" button, which
re-lowers a modified copy in a worker process and shows whether the fallback goes away."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.helpers.gui import LOWER_TIMEOUT_MS, lower_and_wait

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "conv_relu_nchw.py")


def test_channels_last_toggle_is_an_explicit_option(qtbot, window) -> None:
    assert lower_and_wait(qtbot, window, MODEL) == "done"
    assert {n.target for n in window.session.fallbacks()} == {"aten.convolution.default", "aten.clamp.default"}
    window.model_bar.channels_last.setChecked(True)
    assert lower_and_wait(qtbot, window, MODEL) == "done"
    assert window.session.fallbacks() == []
    assert any("--channels-last" in line for line in window.session.log)


def test_verify_button_relowers_in_a_worker_and_shows_the_verdict(qtbot, window, tmp_path) -> None:
    assert lower_and_wait(qtbot, window, MODEL) == "done"
    final = window.session.final()
    conv = next(n for n in final.nodes if n.target == "aten.convolution.default")
    window.state.focus(final.index, conv.id)
    insp = window.inspector
    assert insp.verify_btn.isVisible() and insp.verify_btn.isEnabled()
    assert "aten.conv2d.default" in insp.browser.toPlainText()        # the op the user wrote
    qtbot.mouseClick(insp.verify_btn, Qt.MouseButton.LeftButton)
    assert insp.verifier.is_running() and insp.verifier.job.process_id() > 0   # a worker process
    qtbot.waitUntil(lambda: not insp.verifier.is_running() and insp.verifier.verdict(conv.id)[0] != "verifying",
                    timeout=LOWER_TIMEOUT_MS)
    assert insp.verifier.verdict(conv.id)[0] == "verified"
    assert "verified: this removes the fallback" in insp.verify_label.text()
    # the same run verified the ReLU after the conv: selecting it shows its verdict without a re-run
    relu = next(n for n in final.nodes if n.target == "aten.clamp.default")
    window.state.focus(final.index, relu.id)
    assert "verified: this removes the fallback" in insp.verify_label.text()
    window.state.focus(final.index, conv.id)
    window.grab().save(str(tmp_path / "verify_suggestion.png"))
