"""The graph pane: toolbar (search, fit, toggles, next fallback), legend, and one graph view
or a compare split (stage k-1 | stage k). Layouts are computed on a background thread and
scenes are cached per (stage, grouping), so stepping back and forth is instant."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from backend_core.analyses.graph_layout import Layout

from app.runtime.background import BackgroundRunner
from app.graph.export import render_scene_image
from app.graph.grouping import SCENE_CACHE, GroupSpec, layout_job
from app.graph.heat import StageHeat
from app.graph.navigation import fallback_ids, fit_view, initial_view
from app.graph.placeholder import GraphPlaceholder
from app.graph.search import SearchFinder
from app.widgets.theme import MUTED_STYLE
from app.graph.toolbar import CompareSplit, GraphToolbar, ToolbarActions
from app.graph.scene import GraphScene
from app.graph.stage_info import diff_states, stage_info
from app.lowering.view_state import ViewState

__all__ = ["GraphPanel", "GroupSpec", "layout_job", "SCENE_CACHE"]


class GraphPanel(QWidget):
    """Signals:
        sceneShown(int): the scene of this stage is on screen (tests, screenshots, benchmarks).
        inspectOther(int, str): a node of another stage was clicked (compare view, left side).
        message(str): a short status message for the status bar.
    """

    sceneShown = Signal(int)
    inspectOther = Signal(int, str)
    message = Signal(str)

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.session = state.session
        self.background = BackgroundRunner("cmlens-layout", self)
        self.background.done.connect(self._on_layout)
        self.background.failed.connect(self._on_layout_failed)
        self.background.skipped.connect(lambda job: self._jobs.pop(job, None))
        self.spec = GroupSpec()
        self._scenes: OrderedDict[tuple[int, GroupSpec], GraphScene] = OrderedDict()
        self._jobs: dict[int, tuple[int, GroupSpec, str]] = {}
        self._shown: dict[str, int] = {"main": -1, "left": -1}
        self._fitted = False
        self.heat_overlay = StageHeat(self.session)      # final-graph node id -> colour, per stage
        self.patches: dict[str, Any] | None = None        # a schedule's marks (final-graph ids), see set_patches
        self._build_ui()
        state.stageChanged.connect(self._on_stage)
        state.selectionChanged.connect(self._on_selection)
        state.togglesChanged.connect(self._on_toggles)
        self.session.started.connect(self._on_started)
        self.session.finished.connect(self._on_finished)

    # ------------------------------------------------------------------ UI
    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        tb = GraphToolbar(ToolbarActions(
            fit=self.fit, zoom=lambda f: self.view.zoom(f), set_toggle=self.state.set_toggle,
            next_fallback=self.next_fallback, reset_groups=self.reset_groups,
            legend_toggled=self._update_legends, search_changed=self._update_matches,
            search_next=self.next_match), {n: getattr(self.state, n) for n in ("show_qparams", "show_weights",
                                                                                "compare")}, self)
        self.toolbar = tb
        self.search, self.match_label, self._search_timer = tb.search, tb.match_label, tb.search_timer
        self.finder = SearchFinder(tb, lambda: self.view.graph_scene(), self.state.select)
        self.act_fit, self.act_qparams, self.act_weights = tb.act_fit, tb.act_qparams, tb.act_weights
        self.act_compare, self.act_next_fb, self.act_legend = tb.act_compare, tb.act_next_fb, tb.act_legend
        lay.addWidget(tb)
        self.info = QLabel("", self)
        self.info.setContentsMargins(8, 1, 8, 1)
        self.info.setStyleSheet(MUTED_STYLE)
        lay.addWidget(self.info)
        self.stack = QStackedWidget(self)
        self.placeholder = GraphPlaceholder(self)
        self.split = CompareSplit(self)
        sp = self.split
        self.left, self.view, self.left_title, self.main_title = sp.left, sp.view, sp.left_title, sp.main_title
        self.left_box, self.legend, self.heat_legend = sp.left_box, sp.legend, sp.heat_legend
        self.legend.toggleRequested.connect(self.act_legend.toggle)      # a click on the legend (un)folds it
        self.act_legend.toggled.connect(lambda _on: self._update_legends())
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.split)
        lay.addWidget(self.stack, 1)
        for v, side in ((self.view, "main"), (self.left, "left")):
            v.nodeClicked.connect(lambda nid, s=side: self._on_node_clicked(s, nid))
            v.backgroundClicked.connect(lambda: self.state.select(None))
            v.groupActivated.connect(self.expand_group)
            v.clusterToggled.connect(self.collapse_group)

    # ------------------------------------------------------------------ stage display
    def current_scene(self) -> GraphScene | None:
        return self.view.graph_scene()

    def is_showing(self, stage: int) -> bool:
        """True when the main view shows `stage` with the current grouping (nothing pending)."""
        scene = self.view.graph_scene()
        return (scene is not None and self._shown["main"] == stage
                and self._scenes.get((stage, self.spec)) is scene
                and not any(m[0] == stage and m[2] == "main" for m in self._jobs.values()))

    def _on_started(self) -> None:
        self.heat_overlay.clear_cache()
        self._scenes.clear()
        self._jobs.clear()
        self._shown = {"main": -1, "left": -1}
        self._fitted = False
        self.view.set_graph_scene(None)
        self.left.set_graph_scene(None)
        self.stack.setCurrentWidget(self.placeholder)
        shown = self.session.lowering_job
        self.placeholder.starting(shown.model if shown is not None else None)
        self.info.setText("")

    def _on_finished(self, status: str) -> None:
        """Nothing arrived (bad input, a crash, a cancel): say so instead of "Lowering…"."""
        if not self.session.snapshots:
            self.placeholder.nothing_arrived(status, self.session.error)

    def _on_stage(self, index: int) -> None:
        if index < 0:
            return
        self._show("main", index)
        if self.state.compare:
            self._show("left", max(0, index - 1))

    def _show(self, side: str, index: int) -> None:
        snaps = self.session.snapshots
        if index >= len(snaps):
            return
        key = (index, self.spec)
        scene = self._scenes.get(key)
        if scene is not None:
            self._scenes.move_to_end(key)
            self._display(side, index, scene)
            return
        job = self.background.submit(layout_job(snaps[index], self.spec, self.background), channel=side)
        self._jobs[job] = (index, self.spec, side)
        self.info.setText(f"{snaps[index].stage}: laying out {len(snaps[index].nodes)} nodes…")

    def _on_layout(self, job: int, layout: Layout) -> None:
        meta = self._jobs.pop(job, None)
        if meta is None:
            return
        index, spec, side = meta
        snaps = self.session.snapshots
        if index >= len(snaps) or spec != self.spec:
            return
        scene = GraphScene(snaps[index], layout, self)
        self._scenes[(index, spec)] = scene
        while len(self._scenes) > SCENE_CACHE:
            _, old = self._scenes.popitem(last=False)
            if old is not self.view.scene() and old is not self.left.scene():
                old.deleteLater()
        want = self.state.stage if side == "main" else max(0, self.state.stage - 1)
        if want == index:
            self._display(side, index, scene)
        if layout.note:
            self.message.emit(f"Layout: {layout.note}")

    def _on_layout_failed(self, job: int, message: str) -> None:
        self._jobs.pop(job, None)
        self.info.setText(f"Layout failed: {message.splitlines()[0]}")
        self.message.emit(f"Layout failed: {message.splitlines()[0]}")

    def _display(self, side: str, index: int, scene: GraphScene) -> None:
        view = self.view if side == "main" else self.left
        self.stack.setCurrentWidget(self.split)
        keep = view.graph_scene() is not None
        view.set_graph_scene(scene, keep_view=keep)
        self._shown[side] = index
        scene.set_show_qparams(self.state.show_qparams)
        self._apply_overlay(side, index, scene)
        scene.set_heat(self.heat_for_stage(index) if self.heat is not None else None)
        self._apply_patches(index, scene)
        self._set_titles()
        if side == "main":
            if not self._fitted or self.state.follow_latest:
                self._fitted = True
                self.initial_view()
            self._apply_selection(center=True)
            self._update_matches()
            self.info.setText(stage_info(scene))
            self.sceneShown.emit(index)
        else:
            view.setTransform(self.view.transform())     # same zoom on both sides
            self._apply_selection(center=True)

    def _set_titles(self) -> None:
        snaps = self.session.snapshots
        st = self.state.stage
        if 0 <= st < len(snaps):
            self.main_title.setText(f"after:  {st}  {snaps[st].stage}")
            prev = max(0, st - 1)
            self.left_title.setText(f"before:  {prev}  {snaps[prev].stage}   "
                                    "(removed: red dashes, rewritten: orange)")

    def _apply_overlay(self, side: str, index: int, scene: GraphScene) -> None:
        states = diff_states(self.session.diffs, side, index)
        scene.set_overlay(states)

    # ------------------------------------------------------------------ schedule marks
    def set_patches(self, marks: dict[str, Any] | None) -> None:
        """A schedule's marks on the final graph: {"nodes": [final node ids run per patch], "grid": (P, Q),
        "input": the input node's id}; None clears them. Shown on the final stage (the ids are its own)."""
        self.patches = marks
        for side, v in (("main", self.view), ("left", self.left)):
            scene = v.graph_scene()
            if scene is not None and self._shown[side] >= 0:
                self._apply_patches(self._shown[side], scene)

    def _apply_patches(self, index: int, scene: GraphScene) -> None:
        final = self.session.final()
        m = self.patches if final is not None and index == final.index else None
        if not m:
            scene.set_patches({}, None, None)
            return
        grid = tuple(m["grid"])
        scene.set_patches({n: grid[0] * grid[1] for n in m["nodes"]}, (grid[0], grid[1]), m.get("input"))

    # ------------------------------------------------------------------ heat overlay
    def set_heat(self, colors: dict[str, QColor] | None, value_range: tuple[float, float] = (0.0, 60.0),
                 label: str = "", stops: list[QColor] | None = None) -> None:
        """Colour nodes by error: `colors` maps FINAL-graph node ids to fills (None or {}: off).
        Other stages get the colours through provenance; the colour bar replaces the legend."""
        self.heat_overlay.set(colors)
        if self.heat is not None:
            self.heat_legend.set_range(value_range[0], value_range[1], label, stops or [])
        for side, v in (("main", self.view), ("left", self.left)):
            scene = v.graph_scene()
            if scene is not None and self._shown[side] >= 0:
                scene.set_heat(self.heat_for_stage(self._shown[side]) if self.heat is not None else None)
        self._update_legends()

    @property
    def heat(self) -> dict[str, QColor] | None:
        return self.heat_overlay.colors

    def heat_for_stage(self, index: int) -> dict[str, QColor]:
        """The heat colours of stage `index` (final-graph colours mapped through provenance)."""
        return self.heat_overlay.for_stage(index)

    def _update_legends(self) -> None:
        """The kind legend, folded to its chip unless Legend is on; the heat colour bar whenever a heat
        overlay is on (the colours mean nothing without it)."""
        show = not self.state.compare
        self.legend.set_collapsed(not self.act_legend.isChecked())
        self.legend.setVisible(show and self.heat is None)
        self.heat_legend.setVisible(show and self.heat is not None)
        self.heat_legend.reposition()

    # ------------------------------------------------------------------ selection
    def _on_selection(self, node_id: str, center: bool) -> None:
        self._apply_selection(center=center)

    def _apply_selection(self, *, center: bool) -> None:
        sel = self.state.selected
        scene = self.view.graph_scene()
        if scene is None or self._shown["main"] != self.state.stage:
            return
        if sel is not None and center:
            box = scene.box_for_node(sel)
            if box is not None and box.view_item.is_group:
                self.expand_group(box.view_item.module_path)   # re-layout, then select
                return
        box = scene.set_selected(sel)
        if box is not None and center:
            self.view.center_on_rect(box.sceneBoundingRect())
        lscene = self.left.graph_scene() if self.state.compare else None
        if lscene is not None and self._shown["left"] >= 0:
            other = None
            if sel is not None:
                other = self.session.provenance().step(sel, self.state.stage, self._shown["left"])
            lbox = lscene.set_selected(other)
            if lbox is not None and center:
                self.left.center_on_rect(lbox.sceneBoundingRect())

    def _on_node_clicked(self, side: str, node_id: str) -> None:
        if side == "main":
            self.state.select(node_id)
            return
        mapped = self.session.provenance().step(node_id, self._shown["left"], self.state.stage)
        if mapped is not None:
            self.state.select(mapped)
        else:
            scene = self.left.graph_scene()
            if scene is not None:
                scene.set_selected(node_id)
            self.inspectOther.emit(self._shown["left"], node_id)

    # ------------------------------------------------------------------ toggles / groups
    def _on_toggles(self) -> None:
        st = self.state
        for act, on in ((self.act_qparams, st.show_qparams), (self.act_weights, st.show_weights),
                        (self.act_compare, st.compare)):
            if act.isChecked() != on:
                act.setChecked(on)
        for v in (self.view, self.left):
            scene = v.graph_scene()
            if scene:
                scene.set_show_qparams(st.show_qparams)
        if st.show_weights != self.spec.show_weights:
            self._set_spec(GroupSpec(st.show_weights, self.spec.expanded, self.spec.collapsed))
        self.left_box.setVisible(st.compare)
        self.main_title.setVisible(st.compare)
        self._update_legends()
        if st.compare and st.stage >= 0:
            self._show("left", max(0, st.stage - 1))
            self.split.setSizes([self.split.width() // 2] * 2)

    def _set_spec(self, spec: GroupSpec) -> None:
        self.spec = spec
        if self.state.stage >= 0:
            self._on_stage(self.state.stage)

    def expand_group(self, path: str) -> None:
        self._set_spec(GroupSpec(self.spec.show_weights, self.spec.expanded | {path},
                                 self.spec.collapsed - {path}))

    def collapse_group(self, path: str) -> None:
        self._set_spec(GroupSpec(self.spec.show_weights, self.spec.expanded - {path},
                                 self.spec.collapsed | {path}))

    def reset_groups(self) -> None:
        self._set_spec(GroupSpec(self.spec.show_weights))

    # ------------------------------------------------------------------ navigation
    def initial_view(self) -> None:
        """First look at a graph: fit if that keeps labels readable, else a readable zoom."""
        initial_view(self.view)

    def fit(self) -> None:
        fit_view(self.view)

    def _update_matches(self) -> None:
        self.finder.update()

    def next_match(self) -> None:
        self.finder.next()

    def next_fallback(self) -> None:
        """F3: the next portable fallback in this stage, else in the final graph."""
        snaps = self.session.snapshots
        if not snaps or self.state.stage < 0:
            return
        found = fallback_ids(self.session, self.state.stage)
        if isinstance(found, str):
            self.message.emit(found)
            return
        stage, fbs = found
        cur = self.state.selected
        k = (fbs.index(cur) + 1) % len(fbs) if cur in fbs and stage == self.state.stage else 0
        self.state.focus(stage, fbs[k])
        self.message.emit(f"Fallback {k + 1}/{len(fbs)}: {fbs[k]}")

    # ------------------------------------------------------------------ export
    def render_image(self, path: str) -> str:
        """Write the main graph as PNG or SVG (by suffix); returns the path."""
        scene = self.view.graph_scene()
        if scene is None:
            raise RuntimeError("No graph to export yet.")
        return render_scene_image(scene, path)

    def shutdown(self) -> None:
        self.background.shutdown()
