"""The main window: model bar, pass timeline, graph (or compare split), node inspector,
fallback table / quantizer report / pipeline log, error panel, menus and exports
(menus: app.main_menus; numerics and target wiring: app.main_numerics).

It wires views to the two models (LoweringSession, ViewState) and owns no pipeline state.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QFrame, QMainWindow, QMessageBox, QScrollArea, QTabWidget,
                               QToolBar, QVBoxLayout, QWidget)

from .error_panel import ErrorPanel
from .exporter import Exporter
from .fallback_table import FallbackTable
from .graph_panel import GraphPanel
from .inspector import NodeInspector
from .log_views import PipelineLog, QuantizerReport
from .main_menus import MenusMixin
from .main_numerics import PLOT_DOCK_HEIGHT, TARGET_DOCK_HEIGHT, TARGET_MIN_HEIGHT, NumericsTargetMixin
from .model_bar import ModelBar
from .numerics_panel import NumericsPanel
from .session import LowerRequest, LoweringSession
from .settings import add_recent, app_settings, get_bool, get_str, recent_files
from .target_panel import TargetPanel
from .timeline import PassTimeline
from .view_state import ViewState
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

DEFAULT_MODEL = "ds_cnn"

__all__ = ["MainWindow", "DEFAULT_MODEL", "PLOT_DOCK_HEIGHT", "TARGET_DOCK_HEIGHT", "TARGET_MIN_HEIGHT"]


class MainWindow(MenusMixin, NumericsTargetMixin, QMainWindow):
    """Menus come from MenusMixin (app.main_menus), numerics/target wiring from
    NumericsTargetMixin (app.main_numerics)."""

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

    def _connect(self) -> None:
        self.model_bar.lowerRequested.connect(self.lower)
        self.model_bar.fileOpened.connect(self._on_file_opened)
        self.session.started.connect(self.error_panel.clear)
        self.session.errorRaised.connect(self.error_panel.show_error)
        self.session.finished.connect(self._on_finished)
        self.graph.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.graph.inspectOther.connect(self.inspector.show_node)
        self.exporter.message.connect(lambda m: self.statusBar().showMessage(m, 8000))
        self._connect_numerics_target()

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
