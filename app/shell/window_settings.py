"""What the main window remembers between runs: geometry, dock layout, the last model and its
options, and the view toggles (QSettings; CMLENS_SETTINGS points tests at their own file)."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

from app.lowering.model_bar import ModelBar
from app.lowering.session import LowerRequest
from app.lowering.view_state import ViewState
from app.runtime.settings import get_bool, get_str

REMEMBERED_TOGGLES = ("show_qparams", "hide_unchanged")
DEFAULT_SIZE = (1500, 920)


def restore_window(window: QMainWindow, s: QSettings, model_bar: ModelBar, state: ViewState) -> None:
    geo = s.value("window/geometry")
    if isinstance(geo, QByteArray):
        window.restoreGeometry(geo)
    else:
        window.resize(*DEFAULT_SIZE)
    st = s.value("window/state")
    if isinstance(st, QByteArray):
        window.restoreState(st)
    model_bar.set_options(get_str(s, "lower/target") or None, get_str(s, "lower/flow") or None)
    last = get_str(s, "lower/model")
    if last:
        model_bar.set_source(last)
    for name in REMEMBERED_TOGGLES:
        state.set_toggle(name, get_bool(s, f"view/{name}"))


def save_window(window: QMainWindow, s: QSettings, request: LowerRequest | None, state: ViewState) -> None:
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    if request is not None:
        s.setValue("lower/model", request.source)
        s.setValue("lower/target", request.target)
        s.setValue("lower/flow", request.flow)
    for name in REMEMBERED_TOGGLES:
        s.setValue(f"view/{name}", getattr(state, name))
    s.sync()
