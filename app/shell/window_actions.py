"""What the window's File > Export and Tools > Compare with… entries do, and the sentence the status bar
shows when a lowering ends: kept out of main_window.py, which wires the window."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from backend_core.stages.fallback.changed import keep_going_summary
from backend_core.stages.models.sniff import is_artefact_path

from app.compare import CompareDialog
from app.lowering.session import model_name
from app.runtime.settings import get_str


def export_dialog(win: Any, kind: str, filt: str) -> None:
    """File > Export: ask where, then export_to."""
    shown = win.session.lowering_job
    base = model_name(shown.model) if shown else "model"
    if kind == "bundle":
        bundle_dialog(win)
        return
    suffix = {"json": ".json", "html": ".html", "pte": ".pte", "bpte": ".bpte", "svg": ".svg",
              "png": ".png"}[kind]
    path, _ = QFileDialog.getSaveFileName(win, f"Export {kind.upper()}", base + suffix, filt)
    if not path:
        return
    try:
        win.export_to(kind, path)
    except Exception as e:  # noqa: BLE001 - show any export problem, keep the window alive
        QMessageBox.warning(win, "Export", str(e))


def bundle_dialog(win: Any) -> Any:
    """File > Export > Firmware bundle…: the dialog that asks for the checkout, board and folder up front (the
    checkout and CMSIS-NN the Run-on-target form names are its defaults); None when nothing is lowered."""
    from app.firmware.bundle_dialog import BundleDialog

    shown = win.session.lowering_job
    if shown is None:
        win.statusBar().showMessage("Nothing to export yet: lower a model first.", 8000)
        return None
    last = str(win.settings.value("export/bundle_parent", "") or "")
    dlg = BundleDialog(win.exporter, model_name(shown.model), shown.lower.target, win.target_panel.et_root.text().strip(),
                       win.target_panel.cmsis.text().strip(), start_dir=last, parent=win)
    dlg.written.connect(lambda folder: win.settings.setValue("export/bundle_parent", str(Path(folder).parent)))
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    win.bundle_dialog = dlg
    dlg.show()
    return dlg


def export_to(win: Any, kind: str, path: str) -> None:
    """Write `kind` of the lowering on screen to `path` (a bundle: a folder) through the window's exporter."""
    if kind in ("json", "html", "pte", "bpte"):
        win.exporter.export_file(kind, path)
    elif kind == "bundle":              # the checkout and CMSIS-NN the Run-on-target form names
        win.exporter.export_bundle(path, win.target_panel.et_root.text().strip(),
                                   win.target_panel.cmsis.text().strip())
    else:
        win.graph.render_image(path)
        win.statusBar().showMessage(f"Wrote {path}", 6000)


def finished_message(s: Any, status: str) -> str:
    """The status bar's sentence for a lowering session that ended with `status`."""
    verb = "Read" if s.lowering_job is not None and is_artefact_path(s.lowering_job.model) else "Lowered"
    msg = {"done": f"{verb} in {s.seconds:.1f} s{' (cached)' if s.from_cache else ''}: "
                   f"{len(s.snapshots)} stages, {len(s.fallbacks())} portable fallbacks",
           "failed": "Lowering failed; earlier stages stay browsable",
           "cancelled": "Lowering cancelled",
           "error": ("The file could not be read" if verb == "Read" else "Lowering did not start")
           + " (see the error panel)"}
    changed = keep_going_summary(s.verdicts)
    if status == "done" and changed:        # --keep-going: say it where the user looks first
        msg["done"] += "; " + changed
    return msg.get(status, status)


def compare_dialog(win: Any) -> None:
    """Tools > Compare with…: the current lowering against a second one (a Job per side in the job worker)."""
    shown = win.session.lowering_job
    if shown is None:
        win.statusBar().showMessage("Open a model first: Compare with… puts a second lowering next to it.", 8000)
        return
    req = shown.lower
    dlg = CompareDialog(shown.model, req.target, req.flow, req.channels_last, win)
    if dlg.exec():
        win.compare.start(dlg.side_args())
        win.show_tab("compare")
        win.resizeDocks([win.bottom_dock], [int(win.height() * 0.65)], Qt.Orientation.Vertical)


def wire_history(win: Any) -> None:
    """The History tab's clicks: a point shows that commit's recorded lowering as the window's lowering (no
    lowering again); a change opens the Compare tab on that commit against the one before it."""
    win.history.message.connect(lambda text: win.statusBar().showMessage(text, 10000))
    s = win.settings                        # the store (and model) of the last start, as the other tabs remember
    win.history.remember(get_str(s, "history/store"), get_str(s, "history/model") or None)
    win.history.storeOpened.connect(lambda where, model: (s.setValue("history/store", where),
                                                          s.setValue("history/model", model)))
    win.history.pointOpened.connect(lambda report, title: win.session.show_recorded(report, title))
    win.history.changeOpened.connect(lambda data: (win.compare.show_compare(data), win.show_tab("compare")))
