"""The main window's menus as data: File, Go, View, Tools. The window hands in the callables the items
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
            MenuEntry("Previous stage", lambda: st.step(-1), "Left"),
            MenuEntry("Next stage", lambda: st.step(1), "Right"),
            MenuEntry("First stage", lambda: st.set_stage(0), "Home"),
            MenuEntry("Final stage", lambda: st.set_stage(c.stage_count() - 1), "End"),
            MenuEntry(action=g.act_next_fb), MenuEntry(action=g.act_fit),
            MenuEntry("Find…", lambda: (g.search.setFocus(), g.search.selectAll()), QKeySequence.StandardKey.Find)]),
        ("&View", [
            MenuEntry(action=g.act_qparams), MenuEntry(action=g.act_weights), MenuEntry(action=g.act_compare),
            MenuEntry(action=hide), SEPARATOR, MenuEntry(action=heat), SEPARATOR,
            *(MenuEntry(action=d.toggleViewAction()) for d in docks)]),
        ("&Tools", [
            MenuEntry("Run &numerics", c.run_numerics, "Ctrl+N",
                      "Per-layer float vs fake-quant vs lowered numerics for the current model"),
            MenuEntry("Run on &target…", lambda: c.show_tab("target"), "Ctrl+T", "Build and run the model on QEMU / FVP"),
            MenuEntry("&Memory", lambda: c.show_tab("memory"), "Ctrl+M",
                      "Flash and RAM of the lowered program, and whether it fits a board")]),
    ]
