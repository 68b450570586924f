"""What the main window remembers between runs: geometry (kept inside the screen's available geometry),
dock layout and which docks are collapsed, the last model and its options, and the view toggles
(QSettings; CMLENS_SETTINGS points tests at their own file)."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QRect, QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow

from backend_core.orchestration.jobs.spec import Job

from app.lowering.model_bar import ModelBar
from app.lowering.view_state import ViewState
from app.runtime.settings import get_bool, get_str

REMEMBERED_TOGGLES = ("show_qparams", "hide_unchanged")
DEFAULT_SIZE = (1500, 920)          # on a screen with room for it; a smaller screen gets all of its room


def initial_geometry(available: QRect) -> QRect:
    """The first-run window: 1500x920 (80 % x 85 % of a bigger screen), never more than the screen's
    available geometry (a 1366x768 laptop gets all of it), centred on it."""
    w = min(available.width(), max(DEFAULT_SIZE[0], int(available.width() * 0.8)))
    h = min(available.height(), max(DEFAULT_SIZE[1], int(available.height() * 0.85)))
    r = QRect(0, 0, w, h)
    r.moveCenter(available.center())
    return r


def fit_into(rect: QRect, available: QRect) -> QRect:
    """`rect` shrunk to fit `available` and moved inside it (a window remembered on a bigger screen)."""
    w, h = min(rect.width(), available.width()), min(rect.height(), available.height())
    x = min(max(rect.x(), available.left()), available.left() + available.width() - w)
    y = min(max(rect.y(), available.top()), available.top() + available.height() - h)
    return QRect(x, y, w, h)


def has_screen() -> bool:
    """False on Qt's offscreen/minimal platforms: nothing to fit there (a `--screenshot --size WxH`
    or a test renders at the size it asks for, bigger than the platform's nominal 800x800 screen)."""
    return QGuiApplication.platformName() not in ("offscreen", "minimal")


def available_geometry(window: QMainWindow) -> QRect:
    """The available geometry (without panels and docks of the desktop) of the window's screen."""
    if not has_screen():
        return QRect(0, 0, 16384, 16384)
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def keep_on_screen(window: QMainWindow) -> None:
    """Move/shrink the shown window so its frame (title bar included) lies inside the available geometry."""
    if window.isMaximized() or window.isFullScreen():
        return
    avail = available_geometry(window)
    frame = window.frameGeometry()
    if avail.contains(frame):
        return
    dw, dh = frame.width() - window.width(), frame.height() - window.height()
    inner = fit_into(QRect(frame.x(), frame.y(), frame.width(), frame.height()), avail)
    window.resize(max(inner.width() - dw, 400), max(inner.height() - dh, 300))
    window.move(inner.x(), inner.y())


def restore_window(window: QMainWindow, s: QSettings, model_bar: ModelBar, state: ViewState) -> bool:
    """Geometry, docks, options and toggles; True when a dock layout was remembered (else the window
    lays its docks out for the screen it opens on)."""
    geo = s.value("window/geometry")
    avail = available_geometry(window)
    if isinstance(geo, QByteArray) and window.restoreGeometry(geo):
        window.setGeometry(fit_into(window.geometry(), avail))
    elif has_screen():
        window.setGeometry(initial_geometry(avail))
    else:
        window.resize(*DEFAULT_SIZE)
    st = s.value("window/state")
    remembered = isinstance(st, QByteArray) and window.restoreState(st)
    model_bar.set_options(get_str(s, "lower/target") or None, get_str(s, "lower/flow") or None)
    last = get_str(s, "lower/model")
    if last:
        model_bar.set_source(last)
    for name in REMEMBERED_TOGGLES:
        state.set_toggle(name, get_bool(s, f"view/{name}"))
    return remembered


def collapsed_docks(s: QSettings) -> dict[str, int]:
    """The docks the user folded: object name -> the size it had unfolded (0: unknown)."""
    v: Any = s.value("window/collapsed", [])
    if isinstance(v, str):
        v = [v] if v else []
    out = {}
    for item in v or []:
        name, _, size = str(item).partition("=")
        out[name] = int(size) if size.isdigit() else 0
    return out


def legend_open(s: QSettings) -> bool:
    """The graph's colour legend starts collapsed to its small toggle unless the user opened it."""
    return get_bool(s, "view/legend", False)


def save_window(window: QMainWindow, s: QSettings, lowering: Job | None, state: ViewState,
                collapsed: dict[str, int] | None = None, legend: bool | None = None) -> None:
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    if collapsed is not None:
        s.setValue("window/collapsed", [f"{name}={size}" for name, size in collapsed.items()])
    if legend is not None:
        s.setValue("view/legend", legend)
    if lowering is not None:
        s.setValue("lower/model", lowering.model)
        s.setValue("lower/target", lowering.lower.target)
        s.setValue("lower/flow", lowering.lower.flow)
    for name in REMEMBERED_TOGGLES:
        s.setValue(f"view/{name}", getattr(state, name))
    s.sync()
