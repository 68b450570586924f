"""The window opens fast without torch, lowers ds_cnn stage by stage, steps through passes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from tests.helpers.gui import lower_and_wait, wait_scene

ROOT = Path(__file__).resolve().parents[2]


def test_gui_process_imports_neither_torch_nor_executorch(tmp_path) -> None:
    code = ("import sys, time; t=time.perf_counter()\n"
            "from PySide6.QtWidgets import QApplication\n"
            "app = QApplication([])\n"
            "from app.shell.main_window import MainWindow\n"
            "w = MainWindow(); w.show(); app.processEvents()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'executorch', 'torchao')))\n"
            "w.close()\n")
    env = {"QT_QPA_PLATFORM": "offscreen", "CMLENS_SETTINGS": str(tmp_path / "s.ini"),
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_window_opens_with_all_panes(window) -> None:
    assert window.isVisible()
    assert window.timeline_dock.isVisible() and window.inspector_dock.isVisible()
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "Fallbacks", "Quantizer report", "Pipeline log", "Numerics", "Run on target", "Memory", "Accuracy",
        "Sweep", "Compare", "History"]
    assert window.model_bar.target.count() == 10
    assert window.model_bar.flow.findData("explicit") >= 0
    assert window.model_bar.model.findData("ds_cnn") >= 0
    assert not window.error_panel.isVisible()


def test_lowering_ds_cnn_fills_timeline_with_every_stage(qtbot, window) -> None:
    added: list[int] = []
    window.session.stageAdded.connect(added.append)
    assert lower_and_wait(qtbot, window, "ds_cnn") == "done"
    s = window.session
    assert len(s.planned_stages) == 12
    assert [x.stage for x in s.snapshots] == s.planned_stages
    assert added == list(range(12))                       # streamed one by one, in order
    assert window.timeline.stage_rows() == list(range(12))
    assert window.state.stage == 11                       # follows to the final graph
    wait_scene(qtbot, window)
    assert window.graph.current_scene().snapshot.kind == "final"
    assert window.fallbacks.row_count() == 0
    assert "No portable fallbacks" in window.fallbacks.summary.text()
    assert "Accepted" in window.quant_report.toPlainText()
    assert "[done]" in window.log_view.toPlainText()


def test_stepping_changes_the_graph(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "ds_cnn")
    s = window.session
    edge = s.stage_index("edge")
    window.state.set_stage(edge)
    wait_scene(qtbot, window, edge)
    edge_ops = {b.view_item.lines[0] for b in window.graph.current_scene().boxes.values()}
    assert any(op.startswith("qd.") for op in edge_ops)           # PT2E q/dq ops
    # Right arrow steps through passes until the Cortex-M ops appear
    window.activateWindow()
    for _ in range(s.stage_index("AtenToCortexMPass") - edge):
        qtbot.keyClick(window, Qt.Key.Key_Right)
    assert window.state.stage == s.stage_index("AtenToCortexMPass")
    wait_scene(qtbot, window)
    ops = {b.view_item.lines[0] for b in window.graph.current_scene().boxes.values()}
    assert "cortex_m.quantized_conv2d" in ops and ops != edge_ops
    qtbot.keyClick(window, Qt.Key.Key_Left)
    assert window.state.stage == s.stage_index("AtenToCortexMPass") - 1


def test_hide_unchanged_drops_no_op_passes(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "ds_cnn")
    all_rows = window.timeline.stage_rows()
    window.timeline.hide_unchanged.setChecked(True)
    rows = window.timeline.stage_rows()
    names = [window.session.snapshots[i].stage for i in rows]
    assert len(rows) < len(all_rows)
    assert "RemoveGetItemPass" not in names and "AtenToCortexMPass" in names
    window.state.set_stage(0)
    window.state.step(1)
    window.state.step(1)
    window.state.step(1)
    assert window.state.stage in rows


def test_json_and_image_exports(qtbot, window, tmp_path) -> None:
    lower_and_wait(qtbot, window, "ds_cnn")
    wait_scene(qtbot, window)
    with qtbot.waitSignal(window.exporter.exported, timeout=120_000) as blocker:
        window.export_to("json", str(tmp_path / "r.json"))      # a Job output, written as `cmlens lower --json`
    assert blocker.args == ["json", str(tmp_path / "r.json"), ""], blocker.args
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["status"] == "done" and len(rep["stages"]) == 12
    assert sum(rep["memory"]["planned_bytes"]) > 0     # the section the window's own writer left out (issue 45)
    window.export_to("svg", str(tmp_path / "g.svg"))
    assert "<svg" in (tmp_path / "g.svg").read_text()[:2000]
    window.export_to("png", str(tmp_path / "g.png"))
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_html_report_and_pte_exports(qtbot, window, tmp_path) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    assert window.act_html.isEnabled()
    with qtbot.waitSignal(window.exporter.exported, timeout=120_000) as blocker:
        window.export_to("html", str(tmp_path / "r.html"))
    assert blocker.args[2] == "", blocker.args
    assert "native_layer_norm" in (tmp_path / "r.html").read_text()
    with qtbot.waitSignal(window.exporter.exported, timeout=240_000) as blocker:
        window.export_to("pte", str(tmp_path / "m.pte"))   # a lower Job in the job worker (cached lowering)
    assert blocker.args[2] == "", blocker.args
    assert (tmp_path / "m.pte").stat().st_size > 1000
    assert not (tmp_path / "m.references.json").exists()   # a program has no expected outputs


def test_bpte_export_has_its_references_beside_it(qtbot, window, tmp_path) -> None:
    """A .bpte exported from the window is what `cmlens lower --bpte` writes: the bundle and, beside it,
    references.json (what `cmlens run` compares the target with: the lowered program run on the host)."""
    from backend_core.target.judge.references import LOWERED, beside, read_beside

    lower_and_wait(qtbot, window, "layernorm_mlp")
    out = tmp_path / "out" / "m.bpte"
    out.parent.mkdir()                  # the save dialog names a file in a folder that exists (issue 44 item 12)
    with qtbot.waitSignal(window.exporter.exported, timeout=240_000) as blocker:
        window.export_to("bpte", str(out))
    assert blocker.args == ["bpte", str(out), ""], blocker.args
    job = window.exporter.job.job
    assert job.steps == ("lower", "memory") and job.outputs == {"bpte": str(out)} and job.lower.target == "cortex-m55"
    assert out.stat().st_size > 1000
    assert beside(out) == out.parent / "m.references.json" and beside(out).is_file()
    refs = read_beside(out)
    assert refs is not None and refs.expected_from == LOWERED
    assert window.exporter.job.job_result["files"]["references"] == str(beside(out))
