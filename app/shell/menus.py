"""The main window's menu bar (File, Go, View, Tools) and its recent-files menu.

Separate from MainWindow so the window module is about layout and wiring; the actions call the
window's own slots, and the graph pane's toolbar actions are reused as they are.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from .exporter import html_report_available
from .settings import recent_files
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

if TYPE_CHECKING:
    from .main_window import MainWindow


class MenusMixin:
    """Menu construction for MainWindow (expects the window's views to exist)."""

    def _act(self: MainWindow, menu: QMenu, text: str, slot: Callable[..., Any],
             key: str | QKeySequence.StandardKey = "", tip: str = "") -> QAction:
        """A menu action owned by the window, with an optional shortcut and status tip."""
        act = QAction(text, self)
        if key:
            act.setShortcut(QKeySequence(key))
        if tip:
            act.setToolTip(tip)
            act.setStatusTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self: MainWindow) -> None:
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

    def _fill_recent(self: MainWindow) -> None:
        """Rebuild File > Open recent from the settings."""
        self.recent_menu.clear()
        items = recent_files(self.settings)
        for path in items:
            act = self.recent_menu.addAction(path)
            act.triggered.connect(lambda _=False, p=path: self.open_model(p))
        self.recent_menu.setEnabled(bool(items))
