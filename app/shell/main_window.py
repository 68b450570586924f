"""The main window: model bar, pass timeline, graph (or compare split), node inspector,
fallback table / quantizer report / pipeline log, error panel, menus and exports
(menus as data: app.shell.menus; numerics and target wiring: app.shell.feature_links.FeatureLinks).

It wires views to the two models (LoweringSession, ViewState) and owns no pipeline state.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QWidget

from backend_core.orchestration.jobs.spec import Job
from backend_core.stages.models.sniff import is_artefact_path

from app.artefacts.files import artefact_request, dropped_paths, is_openable
from app.artefacts.overlay import gap_heat, gap_legend_texts
from app.lowering.exporter import Exporter
from app.shell.window_actions import compare_dialog, export_dialog, export_to, finished_message
from app.shell.feature_links import PLOT_DOCK_HEIGHT, TARGET_DOCK_HEIGHT, TARGET_MIN_HEIGHT
from app.shell.menus import build_menu_bar, fill_recent
from app.shell.window_menus import WindowCommands, window_menus
from app.lowering.session import LoweringSession, model_name
from app.widgets.theme import icon
from app.runtime.settings import add_recent, app_settings, recent_files
from app.shell.shortcuts import ShortcutsDialog, shortcut_rows, step_fallback
from app.shell.window_build import build_window
from app.shell.window_settings import (collapsed_docks, keep_on_screen, legend_open, restore_window, save_window)
from app.lowering.view_state import ViewState

if TYPE_CHECKING:      # the widgets window_build.build_window makes (their modules import Qt views only)
    from PySide6.QtWidgets import QDockWidget, QPushButton, QScrollArea, QTabWidget

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
    from app.memory.fit import FitModel
    from app.memory.panel import MemoryPanel
    from app.numerics.panel import NumericsPanel
    from app.shell.details_fold import DetailsFold
    from app.shell.docks import DockCollapser
    from app.shell.feature_links import FeatureLinks
    from app.sweep import SweepView

DEFAULT_MODEL = "ds_cnn"
GRAPH_SHARE = 0.5            # the graph view keeps at least this share of the window height by default
DETAILS_MIN = 150            # the Details dock never opens smaller than this

__all__ = ["MainWindow", "DEFAULT_MODEL", "PLOT_DOCK_HEIGHT", "TARGET_DOCK_HEIGHT", "TARGET_MIN_HEIGHT"]


class MainWindow(QMainWindow):
    """Lays out the feature views around the two lowering models; owns the FeatureLinks object that
    keeps numerics, target and graph in step. Menus are data (app.shell.menus)."""

    # made by window_build.build_window
    model_bar: ModelBar
    error_panel: ErrorPanel
    repro_row: ReproRow
    graph: GraphPanel
    timeline: PassTimeline
    timeline_dock: QDockWidget
    inspector: NodeInspector
    inspector_dock: QDockWidget
    tabs: QTabWidget
    fallbacks: FallbackTable
    quant_report: QuantizerReport
    log_view: PipelineLog
    numerics: NumericsPanel
    memory: MemoryPanel
    fit: FitModel
    target_panel: TargetPanel
    target_scroll: QScrollArea
    accuracy: AccuracyPanel
    sweep: SweepView
    compare: CompareView
    history: HistoryView
    bottom_dock: QDockWidget
    links: FeatureLinks
    collapsers: dict[str, DockCollapser]
    details_fold: DetailsFold
    num_box: QWidget
    num_cancel: QPushButton

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("CortexM Lens")
        self.setObjectName("MainWindow")
        self.setWindowIcon(icon("app"))
        self.settings = app_settings()
        self._sized = False
        self._docks_remembered = False
        self.session = LoweringSession(self)
        self.state = ViewState(self.session, self)
        self.exporter = Exporter(self.session, self)
        build_window(self)
        self._build_menus()
        self._connect()
        self._restore()

    # ------------------------------------------------------------------ building
    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            QTimer.singleShot(0, self._first_show)

    def _first_show(self) -> None:
        keep_on_screen(self)                        # the frame too, once the window manager added it
        if not self._docks_remembered:
            self.layout_docks()

    def layout_docks(self) -> None:
        """The graph first: side docks sized to the window width, the Details dock as tall as it can be
        while the graph view keeps GRAPH_SHARE of the window height."""
        w = self.width()
        self.resizeDocks([self.timeline_dock, self.inspector_dock],
                         [max(240, min(290, int(w * 0.16))), max(270, min(400, int(w * 0.21)))],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.bottom_dock], [self.details_room()], Qt.Orientation.Vertical)
        self.details_fold.refit()         # nothing to list yet: the graph takes the room

    def details_room(self) -> int:
        """The tallest Details dock that leaves the graph view GRAPH_SHARE of the window height."""
        import math

        chrome = self.graph.height() - self.graph.stack.height()      # graph toolbar, stage line
        dock = self.bottom_dock.height() if self.bottom_dock.isVisible() and not self.bottom_dock.isFloating() else 0
        central = self.centralWidget()
        assert central is not None              # set in __init__
        room = central.height() + dock - chrome - math.ceil(GRAPH_SHARE * self.height()) - 6
        return max(DETAILS_MIN, room)

    def on_details_tab_changed(self, _index: int) -> None:
        self.fit_details_to_tab()

    def fit_details_to_tab(self) -> None:
        """A tab with plots may take more room, but never the graph's share of the window."""
        want = self.links._tab_height()
        c = self.collapsers.get(self.bottom_dock.objectName())
        if want and self._sized and not (c and c.collapsed) and self.bottom_dock.height() < want - 40:
            self.resizeDocks([self.bottom_dock], [min(want, max(self.details_room(), self.bottom_dock.height()))],
                             Qt.Orientation.Vertical)

    def _connect(self) -> None:
        self.model_bar.lowerRequested.connect(self.lower)
        self.model_bar.fileOpened.connect(self._on_file_opened)
        self.session.started.connect(self.error_panel.clear)
        self.session.errorRaised.connect(self.error_panel.show_error)
        self.session.finished.connect(self._on_finished)
        self.session.artefactLoaded.connect(self._on_artefact)
        self._gap_heat = False
        self.session.started.connect(self._clear_gap_heat)
        self.setAcceptDrops(True)
        self.graph.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.graph.inspectOther.connect(self.inspector.show_node)
        self.exporter.message.connect(lambda m: self.statusBar().showMessage(m, 8000))

    # ------------------------------------------------------------------ settings
    def _restore(self) -> None:
        self._docks_remembered = restore_window(self, self.settings, self.model_bar, self.state)
        self.graph.act_legend.setChecked(legend_open(self.settings))
        folded = collapsed_docks(self.settings) if self._docks_remembered else {}
        for name, size in folded.items():
            if name in self.collapsers:
                QTimer.singleShot(0, lambda c=self.collapsers[name], n=size: c.set_collapsed(True, unfolded_size=n))

    def _save(self) -> None:
        save_window(self, self.settings, self.session.lowering_job, self.state,
                    collapsed={n: c.unfolded_size for n, c in self.collapsers.items() if c.collapsed},
                    legend=self.graph.act_legend.isChecked())

    # ------------------------------------------------------------------ actions
    def lower(self, job: Job) -> None:  # type: ignore[override]  # not QWidget.lower(): the window's one lowering entry
        """Lower (or read) what `job` names: the model bar's `lowering_job()`, or one made from it."""
        self.session.lower(job)
        name, request = model_name(job.model), job.lower
        self.setWindowTitle(f"CortexM Lens — {name} · {request.target} · {request.flow}")
        if is_artefact_path(job.model):
            self.setWindowTitle(f"CortexM Lens — {name}")
            self.statusBar().showMessage(f"Reading {name}…")
        else:
            self.statusBar().showMessage(f"Lowering {name} for {request.target} ({request.flow} flow)…")

    def lower_default(self) -> None:
        if not self.model_bar.current_source():
            self.model_bar.set_source(DEFAULT_MODEL)
        self.model_bar.request_lower()

    def open_model(self, source: str, target: str | None = None, flow: str | None = None,
                   *, no_cache: bool = False, companions: tuple[tuple[str, str], ...] = ()) -> None:
        """Lower a model source, or read an ExecuTorch artefact (with its companion files)."""
        if is_openable(source) and Path(source).exists():
            self._on_file_opened(source)
        self.model_bar.set_source(source)
        self.model_bar.set_options(target, flow)
        job = self.model_bar.lowering_job()
        request = replace(job.lower, use_cache=job.lower.use_cache and not no_cache, companions=dict(companions) or None)
        self.lower(replace(job, lower=request))

    def open_sweep(self, folder: str | None = None) -> None:
        """Show a sweep folder (`cmlens sweep --out DIR`) in the Sweep tab."""
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Open sweep folder")
            if not folder:
                return
        self.sweep.open_folder(folder)
        self.show_tab("sweep")

    def open_sweep_job(self, job: dict) -> None:
        """A double-clicked sweep row: lower that job's model with its options (the cache has it)."""
        self.model_bar.set_source(job["model"])
        self.model_bar.set_options(job["target"], job["flow"])
        if job.get("calib"):
            self.model_bar.calib.set_value(str(job["calib"]))
        bar_job = self.model_bar.lowering_job()
        self.lower(replace(bar_job, lower=replace(bar_job.lower, channels_last=bool(job.get("channels_last")))))

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        """A model file, or artefacts (an ETDump dropped on an open ETRecord is laid over it)."""
        paths = dropped_paths(event.mimeData())
        if not paths:
            return
        event.acceptProposedAction()
        shown = self.session.lowering_job
        art = artefact_request(paths, shown.model if shown else None)
        if art is not None:
            self.open_model(art[0], companions=art[1])
        else:
            self.open_model(paths[0])

    def _clear_gap_heat(self) -> None:
        if self._gap_heat:
            self._gap_heat = False
            self.graph.set_heat(None)

    def _on_artefact(self, extras: dict) -> None:
        """An ETDump overlay goes to the Run-on-target tab's plots; notes go to the status bar."""
        if extras.get("overlay"):
            self.target_panel.show_recorded(extras["overlay"], Path(str(extras["overlay"].get("etdump", ""))).name,
                                            extras.get("notes", []))
            heat = gap_heat(extras["overlay"].get("gaps"))
            if heat is not None:
                self.graph.set_heat(*heat)             # the gaps on the graph too, not only in the plot
                self.graph.heat_legend.set_texts(*gap_legend_texts(extras["overlay"].get("gaps")))
                self._gap_heat = True
            self.show_tab("target")
        elif extras.get("notes"):
            self.statusBar().showMessage(extras["notes"][0], 10000)

    def _on_file_opened(self, path: str) -> None:
        add_recent(self.settings, path)
        fill_recent(self.recent_menu, recent_files(self.settings), self.open_model)
        self.model_bar.set_models(recent_files(self.settings))

    def _on_finished(self, status: str) -> None:
        s = self.session
        failure = (s.error or {}).get("failure") or {}
        last_good = failure.get("last_good_stage")
        good = {snap.stage: i for i, snap in enumerate(s.snapshots)}.get(last_good) if last_good is not None else None
        node = (s.error or {}).get("node")
        if status == "failed" and good is not None and failure.get("last_good_node") \
                and s.snapshots[good].node(failure["last_good_node"]) is not None:
            self.state.focus(good, failure["last_good_node"])   # the failing op in the last good stage
        elif status == "failed" and node and s.snapshots and s.snapshots[-1].node(node) is not None:
            self.state.focus(len(s.snapshots) - 1, node)      # show where it failed
        self.statusBar().showMessage(finished_message(s, status))

    def _export(self, kind: str, filt: str) -> None:
        export_dialog(self, kind, filt)

    def export_to(self, kind: str, path: str) -> None:
        export_to(self, kind, path)

    # ------------------------------------------------------------------ menus
    def _build_menus(self) -> None:
        cmds = WindowCommands(open_file=self.model_bar._open, lower=self.model_bar.request_lower,
                              cancel=self.session.cancel, export=self._export, quit=self.close,
                              show_tab=self.show_tab, run_numerics=self._run_numerics_tab,
                              stage_count=lambda: len(self.session.snapshots), open_sweep=self.open_sweep,
                              previous_fallback=lambda: step_fallback(self.session, self.state, -1,
                                                                      self.statusBar().showMessage),
                              tabs=[(self.tabs.tabText(i), self._tab_name(self.tabs.widget(i)))
                                    for i in range(self.tabs.count())],
                              fold=lambda name: self.collapsers[name].toggle(),
                              show_shortcuts=self.show_shortcuts, compare=self.compare_with)
        built = build_menu_bar(self.menuBar(), window_menus(cmds, self.state, self.graph, self.numerics.act_heat,
                                                            (self.timeline_dock, self.inspector_dock,
                                                             self.bottom_dock), self), self)
        self.act_cancel, self.act_html = built.actions["cancel"], built.actions["html"]
        self.act_bundle = built.actions["bundle"]          # File > Export > Firmware bundle…
        self.recent_menu = built.menus["recent"]
        fill_recent(self.recent_menu, recent_files(self.settings), self.open_model)

    def _tab_name(self, widget: QWidget | None) -> str:
        return next(n for n, w in self.links.tab_widgets.items() if w is widget)

    def show_shortcuts(self) -> None:
        """Help > Keyboard shortcuts: from the actions themselves (menus and the graph toolbar)."""
        dlg = getattr(self, "shortcuts_dialog", None)
        if dlg is None:
            self.shortcuts_dialog = dlg = ShortcutsDialog(shortcut_rows(self, [self.graph.toolbar]), self)
        dlg.show()
        dlg.raise_()

    # ------------------------------------------------------------------ numerics / target (FeatureLinks)
    def show_tab(self, name: str) -> None:
        """fallbacks | quantizer | log | numerics | target | memory | accuracy | sweep (unfolds the Details dock)"""
        self.links.show_tab(name)
        folded = getattr(self, "collapsers", {}).get(self.bottom_dock.objectName())
        if folded is not None:
            folded.set_collapsed(False)

    def run_numerics(self, inputs: str | None = None) -> None:
        self.links.run_numerics(inputs)

    def _run_numerics_tab(self) -> None:
        self.show_tab("numerics")
        self.run_numerics()

    def focus_final_node(self, node_id: str) -> None:
        self.links.focus_final_node(node_id)

    def compare_with(self) -> None:
        compare_dialog(self)

    # ------------------------------------------------------------------ shutdown
    def shutdown(self) -> None:
        """Stop every process and thread this window started (idempotent)."""
        self.compare.shutdown()
        self.history.shutdown()
        self.numerics.shutdown()
        self.fit.shutdown()
        self.accuracy.shutdown()
        self.target_panel.shutdown()
        self.session.shutdown()
        self.inspector.shutdown()
        self.exporter.shutdown()
        self.repro_row.shutdown()
        self.graph.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self._save()
        self.shutdown()
        super().closeEvent(event)

    def start(self, model: str | None = None, **kw) -> None:
        """After show(): lower `model` (or the last/default one) without blocking the event loop."""
        if model:
            QTimer.singleShot(0, lambda: self.open_model(model, **kw))
        else:
            QTimer.singleShot(0, self.lower_default)
