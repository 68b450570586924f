"""The rows of a sweep folder as a Qt table model. Reads only JSON (sweep.json, results/*.json): the GUI
process never imports torch."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs import Job
from backend_core.orchestration.sweep.dashboard import COLUMNS, rows_of

NUMERIC = {"fallbacks", "arena_bytes", "method_allocator_bytes", "pte_bytes", "instructions", "estimated_ms", "seconds",
           "top1", "flips"}


def read_sweep(folder: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, manifest) of a sweep folder; BadInputError naming what is missing."""
    root = Path(folder)
    manifest_path = root / "sweep.json"
    if not manifest_path.is_file():
        raise BadInputError(f"{root} is not a sweep folder (no sweep.json).",
                            "Open the --out folder of a `cmlens sweep` run.")
    try:
        manifest = json.loads(manifest_path.read_text())
        ids = [(j["id"], Job.from_dict({k: v for k, v in j.items() if k != "id"})) for j in manifest["jobs"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInputError(f"{manifest_path} is damaged ({type(e).__name__}: {e}).",
                            "Run the sweep again into this folder: finished jobs are kept.") from None
    results = {}
    for jid, _ in ids:
        p = root / "results" / f"{jid}.json"
        if p.is_file():
            try:
                results[jid] = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
    return rows_of(ids, results), manifest


def is_bad(key: str, row: dict[str, Any]) -> bool:
    v = row.get(key)
    return ((key == "status" and v not in ("done", None)) or (key == "fallbacks" and (v or 0) > 0)
            or (key == "fits" and v is False) or (key == "outcome" and v not in (None, "PASS"))
            or (key == "error" and bool(v))
            or (key == "top1" and isinstance(v, (int, float)) and isinstance(row.get("float_top1"), (int, float))
                and v < row["float_top1"] - 0.5))          # int8 loses more than half a point to float


def sort_key(key: str, v: Any) -> float | str:
    """A scalar Qt can compare (a Python tuple reaches QSortFilterProxyModel as an opaque object, which
    left the table unsorted): numbers as floats, text as lower-case text; an empty cell sorts last."""
    if key in NUMERIC:
        return float(v) if isinstance(v, (int, float)) else float("inf")
    return "\uffff" if v is None or v == "" else str(v).lower()


class SweepTableModel(QAbstractTableModel):
    def __init__(self, rows: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.rows = rows or []

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt API)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section][1]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row, key = self.rows[index.row()], COLUMNS[index.column()][0]
        v = row.get(key)
        if role == Qt.ItemDataRole.DisplayRole:
            if v is None:
                return ""
            if key == "fits":
                return "yes" if v else "NO"
            if key == "outcome" and row.get("verdict"):
                return row["verdict"]                        # "PASS, bit-exact", as in the dashboard
            if key == "top1" and isinstance(v, (int, float)):
                return f"{v:.2f}"
            if key == "estimated_ms" and isinstance(v, (int, float)):
                return f"{v:.3g}"
            return f"{v:,}" if key in NUMERIC and isinstance(v, (int, float)) else str(v)
        if role == Qt.ItemDataRole.UserRole:                 # the sort key: numbers as numbers
            return sort_key(key, v)
        if role == Qt.ItemDataRole.ToolTipRole and key in ("error", "label"):
            return row.get("error") or row.get("label")
        if role == Qt.ItemDataRole.ToolTipRole and key == "top1" and v is not None:
            return f"top-1 of the lowered program {v:.2f} %, float {row.get('float_top1')} %, {row.get('flips')} flips"
        if role == Qt.ItemDataRole.ToolTipRole and key == "outcome":
            return row.get("verdict_lines") or None
        if role == Qt.ItemDataRole.TextAlignmentRole and key in NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and is_bad(key, row):
            return QBrush(QColor(253, 226, 225))
        if role == Qt.ItemDataRole.ForegroundRole and is_bad(key, row):
            return QBrush(QColor(138, 28, 19))
        return None
