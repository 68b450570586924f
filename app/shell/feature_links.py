"""Numerics and Run-on-target wiring of the main window: the bottom tabs' sizes, the
status-bar progress, and keeping graph selection, heat overlay and numerics plots in step.

Numerics and the target panel speak FINAL-graph node ids; the graph may show any stage, so
the mapping through provenance lives here rather than in either view.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (QDockWidget, QHBoxLayout, QLabel, QMainWindow, QProgressBar, QPushButton,
                               QTabWidget, QVBoxLayout, QWidget)

from backend_core.orchestration.jobs.spec import Job

from app.graph.panel import GraphPanel
from app.lowering.error_panel import ErrorPanel
from app.lowering.model_bar import ModelBar
from app.lowering.session import LoweringSession, model_name, same_lowering
from app.lowering.view_state import ViewState
from app.numerics.panel import NumericsPanel
from app.profile.view import ProfileView
from app.firmware.panel import TargetPanel

PLOT_DOCK_HEIGHT = 400          # the Numerics and Run-on-target tabs need room for their plots
TARGET_DOCK_HEIGHT = 540        # the target panel: form, buttons, result + gap plot, console
TARGET_MIN_HEIGHT = 500         # below this it scrolls instead of squashing its plot


class FeatureLinks(QObject):
    """Owned by the main window: links the lowering (session, view state, graph) with the numerics and
    Run-on-target features, which never see each other."""

    def __init__(self, window: QMainWindow, session: LoweringSession, state: ViewState, graph: GraphPanel,
                 model_bar: ModelBar, numerics: NumericsPanel, target_panel: TargetPanel,
                 error_panel: ErrorPanel, tabs: QTabWidget, bottom_dock: QDockWidget,
                 tab_widgets: dict[str, QWidget]) -> None:
        super().__init__(window)
        self.window, self.session, self.state, self.graph = window, session, state, graph
        self.model_bar, self.numerics, self.target_panel = model_bar, numerics, target_panel
        self.error_panel, self.tabs, self.bottom_dock = error_panel, tabs, bottom_dock
        self.tab_widgets = tab_widgets
        def status_message(m: str, t: int = 8000) -> None:
            window.statusBar().showMessage(m, t)

        self.status_message: Callable[[str, int], None] = status_message
        numerics.set_request_source(self._numerics_source)
        self.profile = ProfileView()
        target_panel.add_result_tab(self.profile, "Profile")
        self._build_status_progress()
        self._connect()

    def statusBar(self):  # noqa: N802 - Qt API
        return self.window.statusBar()

    def height(self) -> int:
        return self.window.height()

    def _build_status_progress(self) -> None:
        """Numerics progress in the status bar (visible from any tab), with its own Cancel."""
        box = QWidget(self.window)
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

    def _connect_profile(self) -> None:
        """A run's per-op profile: bars in the target panel's Profile tab, cost colours on the graph,
        the node's instructions in the inspector."""
        self.target_panel.runFinished.connect(self._on_run_finished)
        self.profile.nodeClicked.connect(self.focus_final_node)
        self.profile.heatChanged.connect(self._on_profile_heat)

    def connect_memory(self, memory, settings) -> None:
        """The Memory tab: the lowering's memory report (the worker runs with --memory), its board
        remembered, a timeline click selects the node, and the node's bytes in the inspector."""
        self.memory = memory
        board = settings.value("memory/board")
        if isinstance(board, str) and board:
            try:
                memory.set_board(board)
            except ValueError:
                pass                          # a board of an older board table: keep the default
        memory.boardChanged.connect(lambda name: settings.setValue("memory/board", name))
        memory.nodeClicked.connect(self.focus_final_node)
        self.session.started.connect(lambda: memory.set_lowering_result(None))
        self.session.finished.connect(lambda _s: memory.set_lowering_result({"memory": self.session.memory}))

    def connect_accuracy(self, accuracy) -> None:
        """The Accuracy tab: it evaluates the lowering on screen (same options: its node ids are the graph's);
        a flipped sample picked colours the graph by that sample's per-layer error and selects the layer
        that flipped it. Another lowering clears it (its node ids would not match)."""
        self.accuracy = accuracy
        accuracy.set_request_source(self._numerics_source)
        accuracy.heatChanged.connect(self._on_accuracy_heat)
        accuracy.nodeClicked.connect(self.focus_final_node)
        accuracy.message.connect(lambda m: self.statusBar().showMessage(m, 8000))
        self.session.started.connect(self._on_lowering_for_accuracy)

    def _on_accuracy_heat(self, colors: dict) -> None:
        if not colors:
            self.graph.set_heat(None)
            return
        import pyqtgraph as pg

        lo, hi, label = self.accuracy.heat_info()
        cmap = pg.colormap.get("inferno")
        self.graph.set_heat(colors, (lo, hi), label, [cmap.map(1.0 - i / 10, mode="qcolor") for i in range(11)])

    def _on_lowering_for_accuracy(self) -> None:
        job, shown = self.session.lowering_job, self.accuracy.result()
        if shown is not None and (job is None or (model_name(job.model), job.lower.target)
                                  != (shown.get("model"), shown.get("target"))):
            self.accuracy.clear()

    def add_inspector_sections(self, inspector) -> None:
        """The profile's lines for a node (final-graph ids: shown on the final stage)."""
        inspector.add_section(lambda snap, n: self.profile.node_html(n.id) if snap.kind == "final" else "")
        inspector.add_section(lambda snap, n: self.memory.node_html(n.id)
                              if snap.kind == "final" and getattr(self, "memory", None) else "")
        self.profile.heatChanged.connect(lambda _c: inspector.refresh())
        self.target_panel.runFinished.connect(lambda _r: inspector.refresh())

    def _on_run_finished(self, result: dict) -> None:
        prof = (result or {}).get("profile")
        self.profile.set_profile(prof)
        if prof:
            self.target_panel.show_result_tab(self.profile)

    def _on_profile_heat(self, colors: dict) -> None:
        args = self.profile.heat_args() if colors else None
        if not args:
            self.graph.set_heat(None)
            return
        self.graph.set_heat(*args)
        texts = self.profile.legend_texts()
        if texts:
            self.graph.heat_legend.set_texts(*texts)

    def _connect(self) -> None:
        """numerics <-> graph, lowering -> numerics/target, target -> graph."""
        self._connect_profile()
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

    def show_tab(self, name: str) -> None:
        """fallbacks | quantizer | log | numerics | target | memory | accuracy"""
        self.bottom_dock.show()
        self.tabs.setCurrentWidget(self.tab_widgets[name])

    def _tab_height(self) -> int:
        """The dock height the current tab wants (0: the tables are fine with less)."""
        w = self.tabs.currentWidget()
        return {id(self.numerics): PLOT_DOCK_HEIGHT, id(self.tab_widgets.get("memory")): PLOT_DOCK_HEIGHT,
                id(self.tab_widgets.get("accuracy")): PLOT_DOCK_HEIGHT, id(self.tab_widgets.get("history")): PLOT_DOCK_HEIGHT,
                id(self.tab_widgets["target"]): TARGET_DOCK_HEIGHT}.get(id(w), 0)

    def _on_tab_changed(self, _index: int) -> None:
        want = self._tab_height()
        if want and self.bottom_dock.height() < want - 40:
            room = max(self.height() - 380, 200)       # keep a usable graph above
            self.window.resizeDocks([self.bottom_dock], [min(want, room)], Qt.Orientation.Vertical)

    def _numerics_source(self) -> Job | None:
        """Numerics and accuracy run on the lowering the graph shows (same options, so node ids match)."""
        job = self.session.lowering_job or self.model_bar.lowering_job()
        return job if job.model else None

    def run_numerics(self, inputs: str | None = None) -> None:
        if inputs is not None:
            self.numerics.inputs.set_value(inputs)
        self.numerics.run_current()

    def _final_index(self) -> int | None:
        f = self.session.final()
        return f.index if f is not None else None

    def focus_final_node(self, node_id: str) -> None:
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

    def _on_graph_selection(self, node_id: str, _center: bool) -> None:
        if not node_id or self.numerics.result() is None:
            return
        fi = self._final_index()
        st = self.state.stage
        if fi is None or st < 0:
            return
        fid = node_id if st == fi else self.session.provenance().nearest(node_id, st, fi)
        if fid:
            self.numerics.view.select_node(fid)

    def _on_heat(self, colors: dict) -> None:
        if not colors:
            self.graph.set_heat(None)
            return
        import pyqtgraph as pg

        from app.numerics.view import HEAT_MAP

        lo, hi, label = self.numerics.heat_info()
        cmap = pg.colormap.get(HEAT_MAP)
        stops = [cmap.map(1.0 - i / 10, mode="qcolor") for i in range(11)]   # worst -> best
        self.graph.set_heat(colors, (lo, hi), label, stops)

    def _on_numerics_progress(self, text: str, done: int, total: int) -> None:
        if total < 0:
            self.num_box.hide()
            return
        self.num_box.show()
        self.num_status.setText(f"Numerics: {text}")
        self.num_bar.setRange(0, max(total, 0))
        if total > 0:
            self.num_bar.setValue(done)

    def _on_numerics_finished(self, status: str) -> None:
        self.num_box.hide()
        if status == "done" and self.state.selected:      # the plots follow the graph's selection
            self._on_graph_selection(self.state.selected, False)

    def _on_lowering_started(self) -> None:
        job = self.session.lowering_job
        if job is not None:
            self.target_panel.set_lowering(job)
        shown = self.numerics.shown_job
        if shown is not None and (job is None or not same_lowering(shown, job)):
            self.numerics.clear()          # another lowering: its node ids would not match
