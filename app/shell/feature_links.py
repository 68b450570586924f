"""Numerics and Run-on-target wiring of the main window: the bottom tabs' sizes, the
status-bar progress, and keeping graph selection, heat overlay and numerics plots in step.

Numerics and the target panel speak FINAL-graph node ids; the graph may show any stage, so
the mapping through provenance lives here rather than in either view.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

if TYPE_CHECKING:
    from .main_window import MainWindow

PLOT_DOCK_HEIGHT = 400          # the Numerics and Run-on-target tabs need room for their plots
TARGET_DOCK_HEIGHT = 540        # the target panel: form, buttons, result + gap plot, console
TARGET_MIN_HEIGHT = 500         # below this it scrolls instead of squashing its plot


class NumericsTargetMixin:
    """Numerics / target behaviour of MainWindow (expects the window's views to exist)."""

    def _build_status_progress(self: MainWindow) -> None:
        """Numerics progress in the status bar (visible from any tab), with its own Cancel."""
        box = QWidget(self)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        self.num_status = QLabel("", box)
        self.num_bar = QProgressBar(box)
        self.num_bar.setMaximumWidth(140)
        self.num_bar.setMaximumHeight(14)
        self.num_bar.setTextVisible(False)
        self.num_cancel = QPushButton("Cancel numerics", box)
        self.num_cancel.setFlat(True)
        self.num_cancel.clicked.connect(self.numerics.cancel)
        for w in (self.num_status, self.num_bar, self.num_cancel):
            row.addWidget(w)
        self.num_box = box
        box.hide()
        self.statusBar().addPermanentWidget(box)

    def _connect_numerics_target(self: MainWindow) -> None:
        """numerics <-> graph, lowering -> numerics/target, target -> graph."""
        self.numerics.nodeClicked.connect(self.focus_final_node)
        self.state.selectionChanged.connect(self._on_graph_selection)
        self.numerics.heatChanged.connect(self._on_heat)
        self.numerics.progress.connect(self._on_numerics_progress)
        self.numerics.errorRaised.connect(self.error_panel.show_error)
        self.numerics.message.connect(lambda m: self.statusBar().showMessage(m, 8000))
        self.numerics.finished.connect(self._on_numerics_finished)
        self.session.started.connect(self._on_lowering_started)
        # run on target
        self.target_panel.nodeClicked.connect(self.focus_final_node)

    TAB_NAMES = {"fallbacks": "fallbacks", "quantizer": "quant_report", "log": "log_view",
                 "numerics": "numerics", "target": "target_scroll"}

    def show_tab(self: MainWindow, name: str) -> None:
        """fallbacks | quantizer | log | numerics | target"""
        self.bottom_dock.show()
        self.tabs.setCurrentWidget(getattr(self, self.TAB_NAMES[name]))

    def _tab_height(self: MainWindow) -> int:
        """The dock height the current tab wants (0: the tables are fine with less)."""
        w = self.tabs.currentWidget()
        return {id(self.numerics): PLOT_DOCK_HEIGHT, id(self.target_scroll): TARGET_DOCK_HEIGHT}.get(id(w), 0)

    def _on_tab_changed(self: MainWindow, _index: int) -> None:
        want = self._tab_height()
        if want and self.bottom_dock.height() < want - 40:
            room = max(self.height() - 380, 200)       # keep a usable graph above
            self.resizeDocks([self.bottom_dock], [min(want, room)], Qt.Orientation.Vertical)

    def _numerics_source(self: MainWindow) -> tuple[str, str, str, str | None] | None:
        """Numerics compare the lowering the graph shows (same options, so node ids match)."""
        req = self.session.request or self.model_bar.request()
        return (req.source, req.target, req.flow, req.calib) if req.source else None

    def run_numerics(self: MainWindow, inputs: str | None = None) -> None:
        if inputs is not None:
            if inputs.isdigit():
                self.numerics.inputs.set_folder(None)
                self.numerics.inputs.count.setValue(int(inputs))
            else:
                self.numerics.inputs.set_folder(inputs)
        self.numerics.run_current()

    def _run_numerics_tab(self: MainWindow) -> None:
        self.show_tab("numerics")
        self.run_numerics()

    def _final_index(self: MainWindow) -> int | None:
        f = self.session.final()
        return f.index if f is not None else None

    def focus_final_node(self: MainWindow, node_id: str) -> None:
        """Select a FINAL-graph node (a numerics point, a target gap): in the stage on screen
        through provenance when it exists there, else on the final stage."""
        final = self.session.final()
        if final is None or final.node(node_id) is None:
            self.statusBar().showMessage(f"{node_id} is not in the final graph shown (lower the model "
                                         "again or re-run)", 6000)
            return
        st = self.state.stage
        if 0 <= st != final.index:
            mapped = self.session.provenance().nearest(node_id, final.index, st)
            if mapped is not None and self.session.snapshots[st].node(mapped) is not None:
                self.state.select(mapped, center=True)
                return
        self.state.focus(final.index, node_id)

    def _on_graph_selection(self: MainWindow, node_id: str, _center: bool) -> None:
        if not node_id or self.numerics.result() is None:
            return
        fi = self._final_index()
        st = self.state.stage
        if fi is None or st < 0:
            return
        fid = node_id if st == fi else self.session.provenance().nearest(node_id, st, fi)
        if fid:
            self.numerics.view.select_node(fid)

    def _on_heat(self: MainWindow, colors: dict) -> None:
        if not colors:
            self.graph.set_heat(None)
            return
        import pyqtgraph as pg

        from .numerics_view import HEAT_MAP

        lo, hi, label = self.numerics.heat_info()
        cmap = pg.colormap.get(HEAT_MAP)
        stops = [cmap.map(1.0 - i / 10, mode="qcolor") for i in range(11)]   # worst -> best
        self.graph.set_heat(colors, (lo, hi), label, stops)

    def _on_numerics_progress(self: MainWindow, text: str, done: int, total: int) -> None:
        if total < 0:
            self.num_box.hide()
            return
        self.num_box.show()
        self.num_status.setText(f"Numerics: {text}")
        self.num_bar.setRange(0, max(total, 0))
        if total > 0:
            self.num_bar.setValue(done)

    def _on_numerics_finished(self: MainWindow, status: str) -> None:
        self.num_box.hide()
        if status == "done" and self.state.selected:      # the plots follow the graph's selection
            self._on_graph_selection(self.state.selected, False)

    def _on_lowering_started(self: MainWindow) -> None:
        req = self.session.request
        if req is not None:
            self.target_panel.set_model_source(req.source, req.target, req.flow)
        shown = self.numerics.request
        if shown is not None and (req is None or shown.lowering() != (req.source, req.target, req.flow, req.calib)):
            self.numerics.clear()          # another lowering: its node ids would not match
