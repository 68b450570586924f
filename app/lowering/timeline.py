"""The pass timeline: every planned stage in order, with +added / -removed / ~rewritten badges.
Click a row (or press Left/Right anywhere in the window) to step; a toggle hides passes that
changed nothing."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import (QCheckBox, QListWidget, QListWidgetItem, QStyle, QStyledItemDelegate,
                               QStyleOptionViewItem, QVBoxLayout, QWidget)

from app.lowering.session import LoweringSession
from app.lowering.view_state import ViewState

ROLE_STAGE = Qt.ItemDataRole.UserRole + 1      # int index, or -1 for pending
ROLE_BADGES = Qt.ItemDataRole.UserRole + 2     # (added, removed, rewritten, changed)
ROLE_STATE = Qt.ItemDataRole.UserRole + 3      # done | pending | running | failed


class _Delegate(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802 - Qt API
        return QSize(200, 38)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        p.save()
        r = option.rect
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        state = index.data(ROLE_STATE)
        if selected:
            p.fillRect(r, QColor("#d6e4f5"))
            p.fillRect(QRect(r.left(), r.top(), 4, r.height()), QColor("#1565c0"))
        elif state == "failed":
            p.fillRect(r, QColor("#ffebee"))
        # done: dark on the light selection / failed fills, else the palette's text (readable on a dark theme)
        plain = QColor("#263238") if selected or state == "failed" else option.palette.color(QPalette.ColorRole.Text)
        color = {"pending": QColor("#9e9e9e"), "running": QColor("#1565c0"),
                 "failed": QColor("#c62828")}.get(state, plain)
        f = QFont(option.font)
        f.setBold(selected)
        p.setFont(f)
        p.setPen(color)
        title = p.fontMetrics().elidedText(str(index.data(Qt.ItemDataRole.DisplayRole)),
                                           Qt.TextElideMode.ElideRight, r.width() - 16)
        p.drawText(r.adjusted(10, 3, -6, -18), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   title)
        sub = QFont(option.font)
        sub.setPointSizeF(max(7.0, option.font.pointSizeF() - 1.5))
        p.setFont(sub)
        x = r.left() + 10
        y = r.bottom() - 17
        badges = index.data(ROLE_BADGES)
        if state in ("pending", "running", "failed"):
            p.setPen(color)
            p.drawText(QRect(x, y, r.width() - 16, 15), Qt.AlignmentFlag.AlignVCenter,
                       {"pending": "pending", "running": "running…", "failed": "failed"}[state])
        elif badges is not None:
            added, removed, rewritten, changed, nodes = badges
            items = [(f"+{added}", "#2e7d32", "#e8f5e9"), (f"−{removed}", "#c62828", "#ffebee"),
                     (f"~{rewritten}", "#ef6c00", "#fff3e0")]
            if not changed:
                items = [("no change", "#757575", "#f5f5f5")]
            for text, fg, bg in items:
                w = p.fontMetrics().horizontalAdvance(text) + 10
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(bg))
                p.drawRoundedRect(QRect(x, y, w, 15), 4, 4)
                p.setPen(QColor(fg))
                p.drawText(QRect(x, y, w, 15), Qt.AlignmentFlag.AlignCenter, text)
                x += w + 4
            p.setPen(QColor("#90a4ae"))
            p.drawText(QRect(x + 2, y, r.right() - x - 6, 15),
                       Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, f"{nodes} nodes")
        p.restore()


class PassTimeline(QWidget):
    """A list of stages that mirrors LoweringSession and drives ViewState.stage."""

    def __init__(self, session: LoweringSession, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.state = session, state
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.hide_unchanged = QCheckBox("Hide passes that changed nothing", self)
        self.hide_unchanged.toggled.connect(lambda on: state.set_toggle("hide_unchanged", on))
        lay.addWidget(self.hide_unchanged)
        self.list = QListWidget(self)
        self.list.setItemDelegate(_Delegate(self.list))
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)   # Left/Right belong to the window
        self.list.setUniformItemSizes(True)
        self.list.currentItemChanged.connect(self._on_current)
        lay.addWidget(self.list, 1)
        self._updating = False
        session.started.connect(self._rebuild)
        session.planned.connect(lambda _s: self._rebuild())
        session.stageAdded.connect(lambda _i: self._rebuild())
        session.finished.connect(lambda _s: self._rebuild())
        state.stageChanged.connect(self._on_stage)
        state.togglesChanged.connect(self._on_toggles)

    def _rebuild(self) -> None:
        s = self.session
        self._updating = True
        self.list.clear()
        visible = set(self.state.visible_stages())
        names = list(s.planned_stages) or [x.stage for x in s.snapshots]
        for i, snap in enumerate(s.snapshots):
            if i >= len(names):
                names.append(snap.stage)
        failed_stage = (s.error or {}).get("stage") if s.status in ("failed", "error") else None
        for i, name in enumerate(names):
            if i < len(s.snapshots):
                if i not in visible:
                    continue
                snap = s.snapshots[i]
                d = s.diffs[i]
                badges = ((len(d.added), len(d.removed), len(d.rewritten),
                           d.changed and snap.changed, len(snap.nodes)) if d is not None
                          else (len(snap.nodes), 0, 0, True, len(snap.nodes)))
                item = QListWidgetItem(f"{i}  {name}")
                item.setData(ROLE_STAGE, i)
                item.setData(ROLE_BADGES, badges)
                item.setData(ROLE_STATE, "done")
                tip = f"{name}: {snap.seconds * 1000:.0f} ms, {len(snap.nodes)} nodes"
                if snap.log:
                    tip += "\n" + "\n".join(snap.log[:5])
                item.setToolTip(tip)
            else:
                state = "pending"
                if s.status == "running" and i == len(s.snapshots):
                    state = "running"
                if failed_stage == name:
                    state = "failed"
                item = QListWidgetItem(f"{i}  {name}")
                item.setData(ROLE_STAGE, -1)
                item.setData(ROLE_STATE, state)
                item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(item)
        self._updating = False
        self._on_stage(self.state.stage)

    def _on_current(self, cur: QListWidgetItem | None, _prev: QListWidgetItem | None) -> None:
        if self._updating or cur is None:
            return
        idx = cur.data(ROLE_STAGE)
        if isinstance(idx, int) and idx >= 0 and idx != self.state.stage:
            self.state.set_stage(idx)

    def _on_stage(self, index: int) -> None:
        self._updating = True
        for row in range(self.list.count()):
            it = self.list.item(row)
            if it.data(ROLE_STAGE) == index:
                self.list.setCurrentItem(it)
                self.list.scrollToItem(it)
                break
        else:
            self.list.setCurrentItem(None)  # type: ignore[call-overload]  # Qt takes nullptr; the stub does not say so
        self._updating = False

    def _on_toggles(self) -> None:
        if self.hide_unchanged.isChecked() != self.state.hide_unchanged:
            self.hide_unchanged.setChecked(self.state.hide_unchanged)
        self._rebuild()

    def stage_rows(self) -> list[int]:
        """Stage indices currently listed (tests)."""
        return [self.list.item(r).data(ROLE_STAGE) for r in range(self.list.count())
                if self.list.item(r).data(ROLE_STAGE) >= 0]
