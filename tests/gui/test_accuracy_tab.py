"""The Accuracy tab, real: digits_cnn lowered in the window with one random calibration image (calib 1, so
int8 flips predictions), evaluated as a Job in the job worker (never in this process), then a flipped
sample clicked; a bad data folder and a cancel keep the results on screen."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.helpers.gui import lower_and_wait

EVAL_TIMEOUT_MS = 300_000
SAMPLES = 40


def _evaluate(qtbot, win) -> str:
    with qtbot.waitSignal(win.accuracy.finished, timeout=EVAL_TIMEOUT_MS) as blocker:
        win.accuracy.run_current()
    return blocker.args[0]


def test_accuracy_tab_bars_matrices_flips_and_graph_colouring(qtbot, window, tmp_path: Path) -> None:
    win = window
    win.model_bar.calib.set_value("1")
    assert lower_and_wait(qtbot, win, "digits_cnn") == "done"
    win.show_tab("accuracy")
    panel = win.accuracy
    panel.limit.setValue(SAMPLES)
    assert _evaluate(qtbot, win) == "done", panel.error
    assert panel.job_slot.job.steps == ("lower", "evaluate") and panel.job_slot.job.lower.calib == 1   # a Job, in the worker
    ev = panel.result()
    assert ev["samples"] == SAMPLES and ev["model"] == "digits_cnn"

    # bars: top-1 and agreement for float, fake-quant and the lowered program, as the JSON says
    bars = panel.bars.values()
    assert list(bars) == ["float", "fake_quant", "lowered"]
    for k, v in bars.items():
        assert v["top1"] == 100 * ev["models"][k]["top1"] and v["agreement"] == 100 * ev["models"][k]["agreement"]
    assert bars["lowered"]["agreement"] < 100.0            # one random image: some predictions flipped
    # confusion matrices side by side, one per model, every sample counted
    mats = panel.matrices.matrices()
    assert [k for k, _ in mats] == ["float", "fake_quant", "lowered"]
    assert all(sum(map(sum, m)) == SAMPLES for _, m in mats)
    assert panel.bars.isVisible() and panel.matrices.isVisible()
    # the flips, with the layer that flipped each
    flips = ev["flipped"]
    assert flips and panel.flips.topLevelItemCount() == len(ev["flips"]["samples"]) == len(flips)
    assert f"{len(flips)} flipped" in panel.flip_head.text()
    first = ev["flips"]["samples"][0]
    item = panel.flips.topLevelItem(0)
    assert item.text(0) == first["sample"] and item.text(2) == f"{first['float']} → {first['lowered']}"
    row = next(i for i, r in enumerate(ev["flips"]["samples"]) if r["layer"])
    traced = ev["flips"]["samples"][row]
    layer_label = next(x["label"] for x in ev["flips"]["layers"] if x["node"] == traced["layer"])
    assert panel.flips.topLevelItem(row).text(3) == layer_label and "digits.py:" in layer_label

    # click it: the graph is coloured by that sample's per-layer error, its layer selected, its input shown
    assert win.graph.heat is None
    target = panel.flips.topLevelItem(row)
    rect = panel.flips.visualItemRect(target)
    with qtbot.waitSignal(panel.heatChanged, timeout=5000):
        qtbot.mouseClick(panel.flips.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    heat = win.graph.heat
    final = win.session.final()
    assert heat and set(heat) == set(traced["profile_db"]) and all(final.node(n) is not None for n in heat)
    worst = min(traced["profile_db"], key=traced["profile_db"].get)
    best = max(traced["profile_db"], key=traced["profile_db"].get)
    assert heat[worst].lightness() > heat[best].lightness()   # inferno: bright = low SQNR = more error
    assert win.state.selected == traced["layer"]              # the layer that flipped it
    lo, hi, label = panel.heat_info()
    assert traced["sample"] in label and lo == min(traced["profile_db"].values())
    img = panel.thumb.image
    assert img is not None and (img.width(), img.height()) == (8, 8)
    values = traced["input"]["values"]
    assert len(values) == 64
    hot = max(range(64), key=lambda i: values[i])
    assert img.pixelColor(hot % 8, hot // 8).red() == 255      # the brightest input value is white

    # a bad data folder: said at once, with the fix; the results stay
    (tmp_path / "empty").mkdir()
    panel.data.setText(str(tmp_path / "empty"))
    with qtbot.waitSignal(panel.finished, timeout=5000) as blocker:
        panel.run_current()
    assert blocker.args[0] == "failed" and not panel.job_slot.is_running()
    assert panel.problem.isVisible() and "empty" in panel.problem.text().lower() and panel.result() is ev
    assert panel.flips.topLevelItemCount() == len(flips)

    # a folder whose layout is fine but whose label is out of range: the worker's error, results stay
    import numpy as np

    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "a.npy", np.zeros((1, 8, 8), dtype=np.float32))
    (bad / "labels.csv").write_text("file,label\na.npy,12\n")
    panel.data.setText(str(bad))
    assert _evaluate(qtbot, win) == "failed"
    text = panel.problem.text()
    assert "out of range" in text and "a.npy" in text and "previous evaluation" in text
    assert panel.result() is ev and panel.bars.values() == bars

    # cancel: the worker stops, the results stay
    panel.data.setText("")
    panel.run_current()
    assert panel.is_running() and panel.cancel_btn.isEnabled()
    with qtbot.waitSignal(panel.finished, timeout=30_000) as blocker:
        panel.cancel()
    assert blocker.args[0] == "cancelled"
    qtbot.waitUntil(lambda: not panel.job_slot.has_processes(), timeout=20_000)
    assert panel.result() is ev and panel.run_btn.isEnabled()


def test_on_target_without_a_checkout_says_so_and_starts_nothing(qtbot, monkeypatch) -> None:
    from app.accuracy import AccuracyPanel
    from app.accuracy.panel import evaluation_job

    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)     # and gui_env's fresh settings remember none
    panel = AccuracyPanel()
    qtbot.addWidget(panel)
    from app.lowering.session import lowering_job
    from backend_core.orchestration.jobs.spec import LowerRequest

    panel.set_request_source(lambda: lowering_job("digits_cnn", LowerRequest()))
    panel.on_target.setValue(16)
    with qtbot.waitSignal(panel.finished, timeout=5000) as blocker:
        panel.run_current()
    assert blocker.args[0] == "failed" and not panel.job_slot.has_processes()
    assert "ExecuTorch checkout" in panel.problem.text() and "Run on target" in panel.problem.text()
    job_k = evaluation_job(lowering_job("digits_cnn", LowerRequest(calib="1")), None, 40, 16, "/et", "/cmsis")
    assert (job_k.evaluate.on_target, job_k.run.et_root, job_k.lower.calib) == (16, "/et", 1)
