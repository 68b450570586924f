"""The main window's menu bar as data: File, Go, View and Tools are lists of MenuEntry records
that name the callables they trigger (as angr-management's menus do), so this module knows nothing
of the window and imports nothing of it."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget


@dataclass(frozen=True)
class MenuEntry:
    """One item: a new action (`text` + `slot`), an existing QAction (`action`), a separator
    (neither), or a submenu (`children`). `name` makes the created QAction/QMenu retrievable."""

    text: str = ""
    slot: Callable[..., Any] | None = None
    key: str | QKeySequence.StandardKey = ""
    tip: str = ""
    action: QAction | None = None
    children: Sequence["MenuEntry"] | None = None
    name: str = ""
    checkable: bool = False


SEPARATOR = MenuEntry()


@dataclass
class BuiltMenus:
    """What building produced: named actions and submenus (e.g. the recent-files menu)."""

    actions: dict[str, QAction] = field(default_factory=dict)
    menus: dict[str, QMenu] = field(default_factory=dict)


def fill_menu(menu: QMenu, entries: Sequence[MenuEntry], owner: QWidget, built: BuiltMenus) -> None:
    for e in entries:
        if e.children is not None:
            sub = menu.addMenu(e.text)
            if e.name:
                built.menus[e.name] = sub
            fill_menu(sub, e.children, owner, built)
        elif e.action is not None:
            menu.addAction(e.action)
        elif e.slot is None:
            menu.addSeparator()
        else:
            act = QAction(e.text, owner)
            if e.key:
                act.setShortcut(QKeySequence(e.key))
            if e.tip:
                act.setToolTip(e.tip)
                act.setStatusTip(e.tip)
            act.setCheckable(e.checkable)
            act.triggered.connect(e.slot)
            menu.addAction(act)
            if e.name:
                built.actions[e.name] = act


def build_menu_bar(bar: QMenuBar, menus: Sequence[tuple[str, Sequence[MenuEntry]]], owner: QWidget) -> BuiltMenus:
    """Add each (title, entries) as a top-level menu."""
    built = BuiltMenus()
    for title, entries in menus:
        fill_menu(bar.addMenu(title), entries, owner, built)
    return built


def fill_recent(menu: QMenu, paths: list[str], open_path: Callable[[str], Any]) -> None:
    """Rebuild File > Open recent."""
    menu.clear()
    for path in paths:
        act = menu.addAction(path)
        act.triggered.connect(lambda _=False, p=path: open_path(p))
    menu.setEnabled(bool(paths))
