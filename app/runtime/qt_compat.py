"""Work around reference-count bugs of PySide6 6.12.0 on Python 3.11 (where None, True and
False are not yet immortal):

- `SignalInstance.emit()` returns `True` without a new reference: every emit from Python
  drops one reference to `True`;
- an invalid QVariant comes back as `None` without a new reference (`QModelIndex.data()` for
  an unset role, `QComboBox.currentData()` on an empty box...);
- `Signal(dict)` / `Signal(list)` drop a reference to every `None` inside the container
  (this app declares container signals as `Signal(object)`, which passes them as they are).

After enough calls the interpreter aborts ("none_dealloc: deallocating None" or
"bool_dealloc"), typically at exit. Importing this module probes for the first bug and, if
present, gives None/True/False a huge reference count, which makes them effectively immortal
the way Python 3.12 does. Nothing else is touched; on a fixed PySide6 it does nothing.
"""
from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

_BOOST = 1 << 40


class _Probe(QObject):
    ping = Signal()


def _emit_leaks() -> bool:
    p = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        p.ping.emit()
    return before - sys.getrefcount(True) >= 8


def _boost(obj: object) -> None:
    ref = ctypes.c_ssize_t.from_address(id(obj))     # PyObject.ob_refcnt (first field)
    ref.value += _BOOST


def install() -> bool:
    """Returns whether the workaround is active."""
    if sys.version_info >= (3, 12):
        return False                                  # immortal singletons: nothing to do
    if sys.getrefcount(None) > _BOOST // 2:
        return True                                   # already installed
    if not _emit_leaks():
        return False
    for obj in (None, True, False):
        _boost(obj)
    return True


ACTIVE = install()
