"""The main window: model bar, pass timeline, graph (or compare split), node inspector,
fallback table / quantizer report / pipeline log, error panel, menus and exports.

It wires views to the two models (LoweringSession, ViewState) and owns no pipeline state.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QFrame, QHBoxLayout, QLabel, QMainWindow, QMenu, QMessageBox,
                               QProgressBar, QPushButton, QScrollArea, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from .error_panel import ErrorPanel
from .exporter import Exporter, html_report_available
from .fallback_table import FallbackTable
from .graph_panel import GraphPanel
from .inspector import NodeInspector
from .log_views import PipelineLog, QuantizerReport
from .model_bar import ModelBar
from .numerics_panel import NumericsPanel
from .session import LowerRequest, LoweringSession
from .settings import add_recent, app_settings, get_bool, get_str, recent_files
from .target_panel import TargetPanel
from .timeline import PassTimeline
from .view_state import ViewState
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

DEFAULT_MODEL = "ds_cnn"
PLOT_DOCK_HEIGHT = 400          # the Numerics and Run-on-target tabs need room for their plots
TARGET_DOCK_HEIGHT = 540        # the target panel: form, buttons, result + gap plot, console
TARGET_MIN_HEIGHT = 500         # below this it scrolls instead of squashing its plot


class MainWindow(QMainWindow):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("CortexM Lens")
        self.setObjectName("MainWindow")
        self.settings = app_settings()
        self._sized = False
        self.session = LoweringSession(self)
        self.state = ViewState(self.session, self)
        self.exporter = Exporter(self.session, self)
        self._build()
        self._build_menus()
        self._connect()
        self._restore()

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        self.model_bar = ModelBar(self.session, self)
        tb = QToolBar("Model", self)
        tb.setObjectName("ModelToolBar")
        tb.setMovable(False)
        tb.addWidget(self.model_bar)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
        self.model_bar.set_models(recent_files(self.settings))

        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.error_panel = ErrorPanel(central)
        lay.addWidget(self.error_panel)
        self.graph = GraphPanel(self.state, central)
        lay.addWidget(self.graph, 1)
        self.setCentralWidget(central)

        self.timeline = PassTimeline(self.session, self.state, self)
        self.timeline_dock = self._dock("Passes", "PassesDock", self.timeline, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.inspector = NodeInspector(self.session, self.state, self)
        self.inspector_dock = self._dock("Node inspector", "InspectorDock", self.inspector,
                                         Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabs = QTabWidget(self)
        self.fallbacks = FallbackTable(self.session, self.state, self)
        self.quant_report = QuantizerReport(self.session, self)
        self.log_view = PipelineLog(self.session, self)
        self.tabs.addTab(self.fallbacks, "Fallbacks")
        self.tabs.addTab(self.quant_report, "Quantizer report")
        self.tabs.addTab(self.log_view, "Pipeline log")
        self.numerics = NumericsPanel(self)
        self.numerics.set_request_source(self._numerics_source)
        self.tabs.addTab(self.numerics, "Numerics")
        self.target_panel = TargetPanel(self)
        self.target_panel.setMinimumHeight(TARGET_MIN_HEIGHT)
        self.target_scroll = QScrollArea(self)
        self.target_scroll.setWidgetResizable(True)
        self.target_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.target_scroll.setWidget(self.target_panel)
        self.tabs.addTab(self.target_scroll, "Run on target")
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.bottom_dock = self._dock("Details", "DetailsDock", self.tabs, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.timeline.setMinimumWidth(250)
        self.inspector.setMinimumWidth(330)
        self.tabs.setMinimumHeight(150)
        self._build_status_progress()
        self.statusBar().showMessage("Ready")

    def _build_status_progress(self) -> None:
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

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if not isinstance(self.settings.value("window/state"), QByteArray):
                QTimer.singleShot(0, self._first_run_docks)

    def _first_run_docks(self) -> None:
        """First run: give the graph most of the room."""
        want = self._tab_height()
        self.resizeDocks([self.bottom_dock], [min(want, max(self.height() - 380, 200)) if want else 170],
                         Qt.Orientation.Vertical)
        self.resizeDocks([self.timeline_dock, self.inspector_dock], [260, 360], Qt.Orientation.Horizontal)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _act(self, menu: QMenu, text: str, slot, key: str | QKeySequence.StandardKey = "",
             tip: str = "") -> QAction:
        act = QAction(text, self)
        if key:
            act.setShortcut(QKeySequence(key))
        if tip:
            act.setToolTip(tip)
            act.setStatusTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._act(f, "&Open model…", self.model_bar._open, QKeySequence.StandardKey.Open)
        self.recent_menu = f.addMenu("Open &recent")
        self._fill_recent()
        f.addSeparator()
        self._act(f, "&Lower", self.model_bar.request_lower, "Ctrl+L")
        self.act_cancel = self._act(f, "&Cancel lowering", self.session.cancel, "Esc")
        f.addSeparator()
        ex = f.addMenu("&Export")
        self._act(ex, "JSON report…", lambda: self._export("json", "JSON (*.json)"))
        self.act_html = self._act(ex, "HTML report…", lambda: self._export("html", "HTML (*.html)"))
        if not html_report_available():
            self.act_html.setEnabled(False)
            self.act_html.setToolTip("backend_core.report.html_report is not available yet")
        self._act(ex, ".pte program…", lambda: self._export("pte", "ExecuTorch program (*.pte)"))
        self._act(ex, ".bpte bundled program…", lambda: self._export("bpte", "Bundled program (*.bpte)"))
        ex.addSeparator()
        self._act(ex, "Graph as SVG…", lambda: self._export("svg", "SVG (*.svg)"))
        self._act(ex, "Graph as PNG…", lambda: self._export("png", "PNG (*.png)"))
        f.addSeparator()
        self._act(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        go = mb.addMenu("&Go")
        self._act(go, "Previous stage", lambda: self.state.step(-1), "Left")
        self._act(go, "Next stage", lambda: self.state.step(1), "Right")
        self._act(go, "First stage", lambda: self.state.set_stage(0), "Home")
        self._act(go, "Final stage", lambda: self.state.set_stage(len(self.session.snapshots) - 1), "End")
        go.addAction(self.graph.act_next_fb)
        go.addAction(self.graph.act_fit)
        self._act(go, "Find…", lambda: (self.graph.search.setFocus(), self.graph.search.selectAll()),
                  QKeySequence.StandardKey.Find)

        view = mb.addMenu("&View")
        for act in (self.graph.act_qparams, self.graph.act_weights, self.graph.act_compare):
            view.addAction(act)
        hide = QAction("Hide passes that changed nothing", self, checkable=True)
        hide.toggled.connect(lambda on: self.state.set_toggle("hide_unchanged", on))
        self.state.togglesChanged.connect(lambda: hide.setChecked(self.state.hide_unchanged))
        view.addAction(hide)
        view.addSeparator()
        view.addAction(self.numerics.act_heat)
        view.addSeparator()
        for dock in (self.timeline_dock, self.inspector_dock, self.bottom_dock):
            view.addAction(dock.toggleViewAction())
        tools = mb.addMenu("&Tools")
        self._act(tools, "Run &numerics", self._run_numerics_tab, "Ctrl+N",
                  "Per-layer float vs fake-quant vs lowered numerics for the current model")
        self._act(tools, "Run on &target…", lambda: self.show_tab("target"), "Ctrl+T",
                  "Build and run the model on QEMU / FVP")

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = recent_files(self.settings)
        for path in items:
            act = self.recent_menu.addAction(path)
            act.triggered.connect(lambda _=False, p=path: self.open_model(p))
        self.recent_menu.setEnabled(bool(items))

    def _connect(self) -> None:
        self.model_bar.lowerRequested.connect(self.lower)
        self.model_bar.fileOpened.connect(self._on_file_opened)
        self.session.started.connect(self.error_panel.clear)
        self.session.errorRaised.connect(self.error_panel.show_error)
        self.session.finished.connect(self._on_finished)
        self.graph.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.graph.inspectOther.connect(self.inspector.show_node)
        self.exporter.message.connect(lambda m: self.statusBar().showMessage(m, 8000))
        # numerics <-> graph
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

    # ------------------------------------------------------------------ settings
    def _restore(self) -> None:
        s = self.settings
        geo = s.value("window/geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        else:
            self.resize(1500, 920)
        st = s.value("window/state")
        if isinstance(st, QByteArray):
            self.restoreState(st)
        self.model_bar.set_options(get_str(s, "lower/target") or None, get_str(s, "lower/flow") or None)
        last = get_str(s, "lower/model")
        if last:
            self.model_bar.set_source(last)
        for name in ("show_qparams", "hide_unchanged"):
            self.state.set_toggle(name, get_bool(s, f"view/{name}"))

    def _save(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        req = self.session.request
        if req is not None:
            s.setValue("lower/model", req.source)
            s.setValue("lower/target", req.target)
            s.setValue("lower/flow", req.flow)
        for name in ("show_qparams", "hide_unchanged"):
            s.setValue(f"view/{name}", getattr(self.state, name))
        s.sync()

    # ------------------------------------------------------------------ actions
    def lower(self, request: LowerRequest) -> None:
        self.session.lower(request)
        name = request.model_name
        self.setWindowTitle(f"CortexM Lens — {name} · {request.target} · {request.flow}")
        self.statusBar().showMessage(f"Lowering {name} for {request.target} ({request.flow} flow)…")

    def lower_default(self) -> None:
        if not self.model_bar.current_source():
            self.model_bar.set_source(DEFAULT_MODEL)
        self.model_bar.request_lower()

    def open_model(self, source: str, target: str | None = None, flow: str | None = None,
                   *, no_cache: bool = False) -> None:
        if Path(source).suffix in (".py", ".pt2") and Path(source).exists():
            self._on_file_opened(source)
        self.model_bar.set_source(source)
        self.model_bar.set_options(target, flow)
        req = self.model_bar.request()
        if no_cache:
            req = LowerRequest(req.source, req.target, req.flow, req.calib, True)
        self.lower(req)

    def _on_file_opened(self, path: str) -> None:
        add_recent(self.settings, path)
        self._fill_recent()
        self.model_bar.set_models(recent_files(self.settings))

    def _on_finished(self, status: str) -> None:
        s = self.session
        node = (s.error or {}).get("node")
        if status == "failed" and node and s.snapshots and s.snapshots[-1].node(node) is not None:
            self.state.focus(len(s.snapshots) - 1, node)      # show where it failed
        msg = {"done": f"Lowered in {s.seconds:.1f} s{' (cached)' if s.from_cache else ''}: "
                       f"{len(s.snapshots)} stages, {len(s.fallbacks())} portable fallbacks",
               "failed": "Lowering failed; earlier stages stay browsable",
               "cancelled": "Lowering cancelled", "error": "Lowering did not start (see the error panel)"}
        self.statusBar().showMessage(msg.get(status, status))

    def _export(self, kind: str, filt: str) -> None:
        req = self.session.request
        base = req.model_name if req else "model"
        suffix = {"json": ".json", "html": ".html", "pte": ".pte", "bpte": ".bpte", "svg": ".svg",
                  "png": ".png"}[kind]
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", base + suffix, filt)
        if not path:
            return
        try:
            self.export_to(kind, path)
        except Exception as e:  # noqa: BLE001 - show any export problem, keep the window alive
            QMessageBox.warning(self, "Export", str(e))

    def export_to(self, kind: str, path: str) -> None:
        if kind == "json":
            self.exporter.export_json(path)
        elif kind == "html":
            self.exporter.export_html(path)
        elif kind in ("pte", "bpte"):
            self.exporter.export_artifact(kind, path)
        else:
            self.graph.render_image(path)
            self.statusBar().showMessage(f"Wrote {path}", 6000)

    # ------------------------------------------------------------------ numerics / target
    TAB_NAMES = {"fallbacks": "fallbacks", "quantizer": "quant_report", "log": "log_view",
                 "numerics": "numerics", "target": "target_scroll"}

    def show_tab(self, name: str) -> None:
        """fallbacks | quantizer | log | numerics | target"""
        self.bottom_dock.show()
        self.tabs.setCurrentWidget(getattr(self, self.TAB_NAMES[name]))

    def _tab_height(self) -> int:
        """The dock height the current tab wants (0: the tables are fine with less)."""
        w = self.tabs.currentWidget()
        return {id(self.numerics): PLOT_DOCK_HEIGHT, id(self.target_scroll): TARGET_DOCK_HEIGHT}.get(id(w), 0)

    def _on_tab_changed(self, _index: int) -> None:
        want = self._tab_height()
        if want and self.bottom_dock.height() < want - 40:
            room = max(self.height() - 380, 200)       # keep a usable graph above
            self.resizeDocks([self.bottom_dock], [min(want, room)], Qt.Orientation.Vertical)

    def _numerics_source(self) -> tuple[str, str, str, str | None] | None:
        """Numerics compare the lowering the graph shows (same options, so node ids match)."""
        req = self.session.request or self.model_bar.request()
        return (req.source, req.target, req.flow, req.calib) if req.source else None

    def run_numerics(self, inputs: str | None = None) -> None:
        if inputs is not None:
            if inputs.isdigit():
                self.numerics.inputs.set_folder(None)
                self.numerics.inputs.count.setValue(int(inputs))
            else:
                self.numerics.inputs.set_folder(inputs)
        self.numerics.run_current()

    def _run_numerics_tab(self) -> None:
        self.show_tab("numerics")
        self.run_numerics()

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

        from .numerics_view import HEAT_MAP

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
        req = self.session.request
        if req is not None:
            self.target_panel.set_model_source(req.source, req.target, req.flow)
        shown = self.numerics.request
        if shown is not None and (req is None or shown.lowering() != (req.source, req.target, req.flow, req.calib)):
            self.numerics.clear()          # another lowering: its node ids would not match

    # ------------------------------------------------------------------ shutdown
    def shutdown(self) -> None:
        """Stop every process and thread this window started (idempotent)."""
        self.numerics.shutdown()
        self.target_panel.shutdown()
        self.session.worker.cancel()
        self.exporter.shutdown()
        self.graph.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save()
        self.shutdown()
        super().closeEvent(event)

    def start(self, model: str | None = None, **kw) -> None:
        """After show(): lower `model` (or the last/default one) without blocking the event loop."""
        if model:
            QTimer.singleShot(0, lambda: self.open_model(model, **kw))
        else:
            QTimer.singleShot(0, self.lower_default)
