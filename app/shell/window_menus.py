"""The main window's menus as data: File, Go, View, Tools, Help. The window hands in the callables the items
trigger (WindowCommands) and the actions of its panes that are reused as they are (the graph
toolbar's toggles, the numerics heat toggle, the docks' show/hide)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QWidget

from app.graph.panel import GraphPanel
from app.lowering.view_state import ViewState
from app.shell.menus import SEPARATOR, MenuEntry


@dataclass(frozen=True)
class WindowCommands:
    open_file: Callable[[], Any]
    lower: Callable[[], Any]
    cancel: Callable[[], Any]
    export: Callable[[str, str], Any]           # (kind, file-dialog filter)
    quit: Callable[[], Any]
    show_tab: Callable[[str], Any]
    run_numerics: Callable[[], Any]
    stage_count: Callable[[], int]
    open_sweep: Callable[[], Any] = lambda: None    # File > Open sweep folder…
    previous_fallback: Callable[[], Any] = lambda: None
    tabs: Sequence[tuple[str, str]] = ()             # (Details tab title, show_tab name), Ctrl+1..9 in order
    fold: Callable[[str], Any] = lambda _name: None  # fold/unfold a dock by object name
    show_shortcuts: Callable[[], Any] = lambda: None
    compare: Callable[[], Any] = lambda: None        # Tools > Compare with…


def _focus_all(line_edit: Any) -> None:
    """Find…: the cursor in the graph's search box, its text selected."""
    line_edit.setFocus()
    line_edit.selectAll()


def window_menus(c: WindowCommands, st: ViewState, g: GraphPanel, heat: QAction,
                 docks: Sequence[QDockWidget], owner: QWidget) -> list[tuple[str, list[MenuEntry]]]:
    hide = QAction("Hide passes that changed nothing", owner, checkable=True)
    hide.toggled.connect(lambda on: st.set_toggle("hide_unchanged", on))
    st.togglesChanged.connect(lambda: hide.setChecked(st.hide_unchanged))
    export = [
        MenuEntry("JSON report…", lambda: c.export("json", "JSON (*.json)")),
        MenuEntry("HTML report…", lambda: c.export("html", "HTML (*.html)"), name="html"),
        MenuEntry(".pte program…", lambda: c.export("pte", "ExecuTorch program (*.pte)")),
        MenuEntry(".bpte bundled program…", lambda: c.export("bpte", "Bundled program (*.bpte)")),
        MenuEntry("Firmware bundle for your project…", lambda: c.export("bundle", ""), name="bundle",
                  tip="cmlens export: the program as a C array, a C API with exact static pools, the selective "
                      "op list and CMake, for your own bare-metal project (needs the ExecuTorch checkout set "
                      "under Run on target)"),
        SEPARATOR,
        MenuEntry("Graph as SVG…", lambda: c.export("svg", "SVG (*.svg)")),
        MenuEntry("Graph as PNG…", lambda: c.export("png", "PNG (*.png)")),
    ]
    return [
        ("&File", [
            MenuEntry("&Open model or ExecuTorch file…", c.open_file, QKeySequence.StandardKey.Open),
            MenuEntry("Open &recent", children=[], name="recent"),
            MenuEntry("Open &sweep folder…", lambda: c.open_sweep(), tip="A `cmlens sweep --out DIR` folder as a table"),
            SEPARATOR,
            MenuEntry("&Lower", c.lower, "Ctrl+L"),
            MenuEntry("&Cancel lowering", c.cancel, "Esc", name="cancel"),
            SEPARATOR,
            MenuEntry("&Export", children=export),
            SEPARATOR,
            MenuEntry("&Quit", c.quit, QKeySequence.StandardKey.Quit)]),
        ("&Go", [
            MenuEntry("Previous pass", lambda: st.step(-1), "Left", "The stage before this one"),
            MenuEntry("Next pass", lambda: st.step(1), "Right", "The stage after this one"),
            MenuEntry("First stage", lambda: st.set_stage(0), "Home"),
            MenuEntry("Final stage", lambda: st.set_stage(c.stage_count() - 1), "End"),
            SEPARATOR,
            MenuEntry(action=g.act_next_fb),
            MenuEntry("Previous fallback", c.previous_fallback, "Shift+F3", "Select the previous portable fallback"),
            SEPARATOR,
            MenuEntry(action=g.act_fit),
            MenuEntry("Find…", lambda: _focus_all(g.search), QKeySequence.StandardKey.Find,
                      "Put the cursor in the graph's search box")]),
        ("&View", [
            MenuEntry(action=g.act_qparams), MenuEntry(action=g.act_weights), MenuEntry(action=g.act_compare),
            MenuEntry(action=g.act_legend),
            MenuEntry(action=hide), SEPARATOR, MenuEntry(action=heat), SEPARATOR,
            MenuEntry("Details tab", children=[
                MenuEntry(title, lambda _=False, n=name: c.show_tab(n), f"Ctrl+{k}")
                for k, (title, name) in enumerate(list(c.tabs)[:9], start=1)]),
            SEPARATOR,
            MenuEntry("Fold or unfold Details", lambda: c.fold("DetailsDock"), "Ctrl+J",
                      "Fold the Details panel to its row of tabs (more room for the graph), or unfold it"),
            MenuEntry("Fold or unfold Node inspector", lambda: c.fold("InspectorDock"), "Ctrl+I"),
            MenuEntry("Fold or unfold Passes", lambda: c.fold("PassesDock"), "Ctrl+P"),
            SEPARATOR,
            *(MenuEntry(action=d.toggleViewAction()) for d in docks)]),
        ("&Tools", [
            MenuEntry("Run &numerics", c.run_numerics, "Ctrl+N",
                      "Per-layer float vs fake-quant vs lowered numerics for the current model"),
            MenuEntry("Run on &target…", lambda: c.show_tab("target"), "Ctrl+T", "Build and run the model on QEMU / FVP"),
            MenuEntry("&Memory", lambda: c.show_tab("memory"), "Ctrl+M",
                      "Flash and RAM of the lowered program, and whether it fits a board"),
            MenuEntry("&Accuracy", lambda: c.show_tab("accuracy"), tip="Accuracy on labelled data: float vs "
                      "fake-quant vs the lowered program, and the layer that flipped each prediction"),
            MenuEntry("&Compare with…", c.compare, tip="Put a second lowering (another CPU, options or model "
                      "file, a .pte or a saved JSON) next to this one, matched by the op you wrote")]),
        ("&Help", [
            MenuEntry("&Keyboard shortcuts", c.show_shortcuts, "F1", "Every shortcut of the window, by menu")]),
    ]
