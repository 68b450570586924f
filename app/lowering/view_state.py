"""What the user is looking at: the current stage, the selected node, and view toggles.

Stepping through stages maps the selection through provenance, so the selected node stays
selected (and centred) while scrubbing through passes, like iongraph's tracked node.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.lowering.reselect import Anchor, anchor_of, resolve
from app.lowering.session import LoweringSession


class ViewState(QObject):
    """Signals:
        stageChanged(int): the current stage index (-1: none yet).
        selectionChanged(str, bool): node id in the current stage ("" for none), and whether
            views should centre on it. (Not Signal(object): PySide6 mis-counts None references.)
        togglesChanged(): show_qparams / show_weights / hide_unchanged / compare changed.
    """

    stageChanged = Signal(int)
    selectionChanged = Signal(str, bool)
    togglesChanged = Signal()

    def __init__(self, session: LoweringSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.stage = -1
        self.selected: str | None = None
        self.follow_latest = True          # jump to new stages until the user picks one
        self.show_qparams = False
        self.show_weights = False
        self.hide_unchanged = False
        self.compare = False
        self._carry: tuple[str, Anchor] | None = None    # (source, selection) to find again when it ends
        self._carry_follow = True
        session.started.connect(self._on_started)
        session.stageAdded.connect(self._on_stage_added)
        session.finished.connect(self._on_finished)

    # ------------------------------------------------------------------ stages
    def visible_stages(self) -> list[int]:
        """Stage indices the timeline shows (hide-unchanged drops passes that changed nothing)."""
        out = []
        for i, s in enumerate(self.session.snapshots):
            d = self.session.diffs[i] if i < len(self.session.diffs) else None
            unchanged = i > 0 and s.kind == "pass" and (not s.changed or (d is not None and not d.changed))
            if not (self.hide_unchanged and unchanged):
                out.append(i)
        return out

    def set_stage(self, index: int, *, user: bool = True) -> None:
        snaps = self.session.snapshots
        if not snaps:
            return
        index = max(0, min(index, len(snaps) - 1))
        if user:
            self.follow_latest = False
        if index == self.stage:
            return
        old, self.stage = self.stage, index
        sel = self.selected
        if sel is not None and old >= 0:
            sel = self.session.provenance().nearest(sel, old, index)
        self.selected = sel
        self.stageChanged.emit(index)
        self.selectionChanged.emit(sel or "", True)

    def step(self, delta: int) -> None:
        """Previous/next visible stage (Left/Right)."""
        vis = self.visible_stages()
        if not vis:
            return
        if self.stage not in vis:
            cand = [i for i in vis if (i > self.stage if delta > 0 else i < self.stage)]
            target = (cand[0] if delta > 0 else cand[-1]) if cand else vis[0 if delta < 0 else -1]
        else:
            k = vis.index(self.stage) + (1 if delta > 0 else -1)
            target = vis[max(0, min(k, len(vis) - 1))]
        self.set_stage(target)

    # ------------------------------------------------------------------ selection
    def select(self, node_id: str | None, *, center: bool = False) -> None:
        if node_id == self.selected and not center:
            return
        self.selected = node_id
        self.selectionChanged.emit(node_id or "", center)

    def focus(self, stage: int, node_id: str) -> None:
        """Show `node_id` of stage `stage`, selected and centred (fallback table, history)."""
        self.follow_latest = False
        if stage != self.stage:
            self.selected = None
            self.set_stage(stage)
        self.select(node_id, center=True)

    # ------------------------------------------------------------------ toggles
    def set_toggle(self, name: str, value: bool) -> None:
        if getattr(self, name) != value:
            setattr(self, name, value)
            self.togglesChanged.emit()

    # ------------------------------------------------------------------ session
    def _on_started(self) -> None:
        # Lowering the same model again (it changed on disk): carry the selected op over (reselect.py).
        # A lowering that failed (the helper was deleted) keeps the carry for the one that follows.
        prev, source = self.session.previous_snapshots, self.session.lowering_job.model if self.session.lowering_job else ""
        anchor = anchor_of(prev, self.stage, self.selected) if prev and self.stage >= 0 else None
        if anchor is not None:
            self._carry, self._carry_follow = (source, anchor), self.follow_latest
        elif self._carry is not None and self._carry[0] != source:
            self._carry = None
        if self._carry is not None:
            self.selected = None         # old ids mean nothing in the new stages until it is found
        self.stage = -1
        self.follow_latest = True
        self.stageChanged.emit(-1)

    def _on_stage_added(self, index: int) -> None:
        if self.follow_latest:
            self.set_stage(index, user=False)

    def _on_finished(self, status: str) -> None:
        if self._carry is None or not self.session.snapshots:
            carry = None                 # nothing to carry, or nothing arrived: keep it for the next one
        else:
            carry, self._carry = self._carry[1], None
        if carry is not None and self.follow_latest:
            found = resolve(carry, self.session.snapshots, self.session.provenance())
            if found is not None:
                stage, node = found
                self.selected = None
                self.set_stage(stage, user=False)
                self.follow_latest = self._carry_follow
                if node is not None:
                    self.select(node, center=True)
                return
        if self.follow_latest and self.session.snapshots:
            self.set_stage(len(self.session.snapshots) - 1, user=False)
