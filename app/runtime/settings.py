"""QSettings access: window layout, last options, recent files.

Set CMLENS_SETTINGS=/path/file.ini to use an ini file instead of the user's settings (tests,
screenshots)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

MAX_RECENT = 10


def app_settings() -> QSettings:
    path = os.environ.get("CMLENS_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("CortexM Lens", "cmlens")


def recent_files(s: QSettings) -> list[str]:
    value: Any = s.value("recent_files", [])
    if isinstance(value, str):
        value = [value]
    return [str(p) for p in (value or []) if Path(str(p)).exists()]


def add_recent(s: QSettings, path: str) -> list[str]:
    path = str(Path(path).resolve())
    items = [p for p in recent_files(s) if p != path]
    items.insert(0, path)
    items = items[:MAX_RECENT]
    s.setValue("recent_files", items)
    return items


def get_str(s: QSettings, key: str, default: str = "") -> str:
    v = s.value(key, default)
    return str(v) if v is not None else default


def get_bool(s: QSettings, key: str, default: bool = False) -> bool:
    v = s.value(key, default)
    if isinstance(v, str):
        return v.lower() in ("1", "true", "yes")
    return bool(v)
