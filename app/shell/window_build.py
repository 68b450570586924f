"""The main window's widgets, built once: the model bar, the graph with its error and reproducer rows, the
Passes and Node inspector docks, and the Details dock's tabs, then the links that keep them in step
(app.shell.feature_links). Split from main_window.py, which handles what happens afterwards."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QToolBar, QVBoxLayout, QWidget

from app.accuracy import AccuracyPanel
from app.compare import CompareView
from app.firmware.panel import TargetPanel
from app.graph.panel import GraphPanel
from app.history import HistoryView
from app.lowering.error_panel import ErrorPanel
from app.lowering.fallback_table import FallbackTable
from app.lowering.inspector import NodeInspector
from app.lowering.log_views import PipelineLog, QuantizerReport
from app.lowering.model_bar import ModelBar
from app.lowering.repro_row import ReproRow
from app.lowering.timeline import PassTimeline
from app.memory.panel import MemoryPanel
from app.numerics.panel import NumericsPanel
from app.runtime.settings import recent_files
from app.shell.details_fold import DetailsFold
from app.shell.docks import add_dock, collapsible_docks
from app.shell.feature_links import FeatureLinks
from app.shell.fit_links import connect_fit
from app.shell.window_actions import wire_history
from app.sweep import SweepView


def build_window(win: Any) -> None:
    """Every widget of `win` (a MainWindow), as attributes the rest of the window and the tests use."""
    _central(win)
    _tabs(win)
    _links(win)


def _central(win: Any) -> None:
    """The model bar, the graph (with the error panel and the reproducer row above it) and the side docks."""
    win.model_bar = ModelBar(win.session, win)
    tb = QToolBar("Model", win)
    tb.setObjectName("ModelToolBar")
    tb.setMovable(False)
    tb.addWidget(win.model_bar)
    win.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
    win.model_bar.set_models(recent_files(win.settings))

    central = QWidget(win)
    lay = QVBoxLayout(central)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(2)
    win.error_panel = ErrorPanel(central)
    lay.addWidget(win.error_panel)
    win.repro_row = ReproRow(win.session, central)
    lay.addWidget(win.repro_row)
    win.graph = GraphPanel(win.state, central)
    lay.addWidget(win.graph, 1)
    win.setCentralWidget(central)

    win.timeline = PassTimeline(win.session, win.state, win)
    win.timeline_dock = add_dock(win, "Passes", "PassesDock", win.timeline, Qt.DockWidgetArea.LeftDockWidgetArea)
    win.inspector = NodeInspector(win.session, win.state, win)
    win.inspector_dock = add_dock(win, "Node inspector", "InspectorDock", win.inspector,
                                     Qt.DockWidgetArea.RightDockWidgetArea)


def _tabs(win: Any) -> None:
    """The Details dock's tabs, in the order the View menu lists them."""
    win.tabs = QTabWidget(win)
    win.fallbacks = FallbackTable(win.session, win.state, win)
    win.quant_report = QuantizerReport(win.session, win)
    win.log_view = PipelineLog(win.session, win)
    win.tabs.addTab(win.fallbacks, "Fallbacks")
    win.tabs.addTab(win.quant_report, "Quantizer report")
    win.tabs.addTab(win.log_view, "Pipeline log")
    win.numerics = NumericsPanel(win)
    win.memory = MemoryPanel(win)
    win.tabs.addTab(win.numerics, "Numerics")
    win.target_panel = TargetPanel(win)
    win.target_scroll = QScrollArea(win)
    win.target_scroll.setWidgetResizable(True)
    win.target_scroll.setFrameShape(QFrame.Shape.NoFrame)
    win.target_scroll.setWidget(win.target_panel)
    win.tabs.addTab(win.target_scroll, "Run on target")
    win.tabs.addTab(win.memory, "Memory")
    win.accuracy = AccuracyPanel(win)
    win.tabs.addTab(win.accuracy, "Accuracy")
    win.sweep = SweepView(win)
    win.sweep.openRequested.connect(win.open_sweep_job)
    win.tabs.addTab(win.sweep, "Sweep")
    win.compare = CompareView(win)
    win.tabs.addTab(win.compare, "Compare")
    win.history = HistoryView(win)
    win.tabs.addTab(win.history, "History")


def _links(win: Any) -> None:
    """The Details dock, the links between the views, the foldable docks."""
    win.bottom_dock = add_dock(win, "Details", "DetailsDock", win.tabs, Qt.DockWidgetArea.BottomDockWidgetArea)
    win.links = FeatureLinks(win, win.session, win.state, win.graph, win.model_bar, win.numerics,
                              win.target_panel, win.error_panel, win.tabs, win.bottom_dock,
                              {"fallbacks": win.fallbacks, "quantizer": win.quant_report, "log": win.log_view,
                               "numerics": win.numerics, "target": win.target_scroll,
                               "memory": win.memory, "accuracy": win.accuracy, "sweep": win.sweep,
                               "compare": win.compare, "history": win.history})
    wire_history(win)
    win.tabs.currentChanged.connect(win.on_details_tab_changed)
    win.collapsers = collapsible_docks(win, {win.timeline_dock: True, win.inspector_dock: False},
                                        win.bottom_dock, win.tabs)
    win.details_fold = DetailsFold(win, win.bottom_dock, win.tabs, win.fallbacks)
    win.num_box, win.num_cancel = win.links.num_box, win.links.num_cancel
    win.links.add_inspector_sections(win.inspector)
    win.links.connect_memory(win.memory, win.settings)
    win.fit = connect_fit(win)
    win.links.connect_accuracy(win.accuracy)
    win.timeline.setMinimumWidth(200)
    win.inspector.setMinimumWidth(220)
    win.statusBar().showMessage("Ready")
