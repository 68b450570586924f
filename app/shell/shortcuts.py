"""Keyboard: the previous-fallback step (the graph toolbar has only "next"), and Help > Keyboard shortcuts,
listed from the window's own actions (menus and the graph toolbar), so the list cannot drift from what
the keys do."""
from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMainWindow, QMenu, QTextBrowser, QToolBar, QVBoxLayout, QWidget

from app.graph.navigation import fallback_ids
from app.lowering.session import LoweringSession
from app.lowering.view_state import ViewState


def step_fallback(session: LoweringSession, state: ViewState, delta: int, message: Callable[[str], object]) -> None:
    """Select the next (delta 1) or previous (delta -1) portable fallback of this stage, else of the final
    graph, wrapping around; `message` gets "Fallback k/n: id" or why there is none."""
    if not session.snapshots or state.stage < 0:
        return
    found = fallback_ids(session, state.stage)
    if isinstance(found, str):
        message(found)
        return
    stage, fbs = found
    cur = state.selected
    if cur in fbs and stage == state.stage:
        k = (fbs.index(cur) + delta) % len(fbs)
    else:
        k = 0 if delta > 0 else len(fbs) - 1
    state.focus(stage, fbs[k])
    message(f"Fallback {k + 1}/{len(fbs)}: {fbs[k]}")


def _label(action: QAction) -> str:
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def _menu_rows(menu: QMenu, group: str, seen: set[int], rows: list[tuple[str, str, str]]) -> None:
    for act in menu.actions():
        if isinstance(sub := act.menu(), QMenu):
            _menu_rows(sub, f"{group} > {_label(act)}", seen, rows)
        elif not act.isSeparator() and not act.shortcut().isEmpty() and id(act) not in seen:
            seen.add(id(act))
            rows.append((group, _label(act) or act.toolTip(), act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))


def shortcut_rows(window: QMainWindow, toolbars: list[QToolBar] | None = None) -> list[tuple[str, str, str]]:
    """(where, what, keys) for every action of the menus and of `toolbars` that has a shortcut."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()
    for top in window.menuBar().actions():
        if isinstance(menu := top.menu(), QMenu):
            _menu_rows(menu, _label(top), seen, rows)
    for tb in toolbars or []:
        for act in tb.actions():
            if not act.shortcut().isEmpty() and id(act) not in seen:
                seen.add(id(act))
                rows.append(("Graph toolbar", _label(act) or act.toolTip().split(" (")[0],
                             act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))
    return rows


class ShortcutsDialog(QDialog):
    """A small non-modal table of the shortcuts, grouped by menu."""

    def __init__(self, rows: list[tuple[str, str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = rows
        lay = QVBoxLayout(self)
        self.text = QTextBrowser(self)
        body, last = [], None
        for group, what, keys in rows:
            if group != last:
                body.append(f"<tr><td colspan=2 style='padding-top:6px'><b>{html.escape(group)}</b></td></tr>")
                last = group
            body.append(f"<tr><td style='padding-right:18px'><tt>{html.escape(keys)}</tt></td>"
                        f"<td>{html.escape(what)}</td></tr>")
        self.text.setHtml("<table cellspacing=0>" + "".join(body) + "</table>")
        lay.addWidget(self.text)
        self.resize(460, 560)
