"""The graph pane: toolbar (search, fit, toggles, next fallback), legend, and one graph view
or a compare split (stage k-1 | stage k). Layouts are computed on a background thread and
scenes are cached per (stage, grouping), so stepping back and forth is instant."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QImage, QKeySequence, QPainter
from PySide6.QtWidgets import (QLabel, QLineEdit, QSplitter, QStackedWidget, QToolBar, QVBoxLayout,
                               QWidget)

from backend_core.layout import Layout, LayoutOptions, auto_collapse, compute_layout
from backend_core.snapshot.model import KIND_FALLBACK, GraphSnapshot

from .background import BackgroundRunner
from .graph_scene import GraphScene
from .graph_view import GraphView
from .legend import HeatLegend, Legend
from .view_state import ViewState
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

SCENE_CACHE = 10


@dataclass(frozen=True)
class GroupSpec:
    """The user's grouping choices, applied on top of the automatic collapse."""

    show_weights: bool = False
    expanded: frozenset[str] = frozenset()
    collapsed: frozenset[str] = frozenset()


def layout_job(snap: GraphSnapshot, spec: GroupSpec, runner: BackgroundRunner):
    """Runs on the background thread."""
    def run() -> Layout:
        auto = auto_collapse(snap, spec.show_weights)
        opts = LayoutOptions(collapsed=frozenset((auto - spec.expanded) | spec.collapsed),
                             show_weights=spec.show_weights)
        return compute_layout(snap, opts, register=runner.register_process)
    return run


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
        self.runner = BackgroundRunner("cmlens-layout", self)
        self.runner.done.connect(self._on_layout)
        self.runner.failed.connect(self._on_layout_failed)
        self.runner.skipped.connect(lambda job: self._jobs.pop(job, None))
        self.spec = GroupSpec()
        self._scenes: OrderedDict[tuple[int, GroupSpec], GraphScene] = OrderedDict()
        self._jobs: dict[int, tuple[int, GroupSpec, str]] = {}
        self._shown: dict[str, int] = {"main": -1, "left": -1}
        self._fitted = False
        self._matches: list[str] = []
        self._match_pos = -1
        self.heat: dict[str, QColor] | None = None        # final-graph node id -> colour
        self._heat_by_stage: dict[int, dict[str, QColor]] = {}
        self._build_ui()
        state.stageChanged.connect(self._on_stage)
        state.selectionChanged.connect(self._on_selection)
        state.togglesChanged.connect(self._on_toggles)
        self.session.started.connect(self._on_started)

    # ------------------------------------------------------------------ UI
    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        tb = QToolBar("Graph", self)
        tb.setIconSize(QSize(16, 16))
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search node name or op…  (Enter: next)")
        self.search.setClearButtonEnabled(True)
        self.search.setMaximumWidth(280)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.search.returnPressed.connect(self.next_match)
        self._search_timer = QTimer(self, singleShot=True, interval=150)
        self._search_timer.timeout.connect(self._update_matches)
        tb.addWidget(self.search)
        self.match_label = QLabel("", self)
        tb.addWidget(self.match_label)
        tb.addSeparator()
        self.act_fit = self._action(tb, "Fit", "Fit the graph to the view (F)", "F", self.fit)
        self._action(tb, "+", "Zoom in (+)", "+", lambda: self.view.zoom(1.25))
        self._action(tb, "−", "Zoom out (-)", "-", lambda: self.view.zoom(0.8))
        tb.addSeparator()
        self.act_qparams = self._toggle(tb, "Q params", "Show quantization parameters on edges (Q)", "Q",
                                        "show_qparams")
        self.act_weights = self._toggle(tb, "Weights", "Draw weights and scratch buffers as nodes (W)",
                                        "W", "show_weights")
        self.act_compare = self._toggle(tb, "Compare", "Split view: previous stage | this stage (C)",
                                        "C", "compare")
        tb.addSeparator()
        self.act_next_fb = self._action(tb, "Next fallback", "Select the next portable fallback (F3)",
                                        "F3", self.next_fallback)
        self._action(tb, "Reset groups", "Back to the automatic grouping", "", self.reset_groups)
        self.act_legend = self._action(tb, "Legend", "Show the colour legend (L)", "L",
                                       lambda _on: self._update_legends())
        self.act_legend.setCheckable(True)
        self.act_legend.setChecked(True)
        lay.addWidget(tb)
        self.info = QLabel("", self)
        self.info.setContentsMargins(8, 1, 8, 1)
        self.info.setStyleSheet("color:#546e7a")
        lay.addWidget(self.info)
        self.stack = QStackedWidget(self)
        self.placeholder = QLabel("Choose a model and press Lower.\nStages appear here as they complete.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet("color:#78909c; font-size:14px")
        self.split = QSplitter(Qt.Orientation.Horizontal, self)
        self.left = GraphView(self)
        self.view = GraphView(self)
        self.left_title = self._title_label()
        self.main_title = self._title_label()
        self.left_box = self._titled(self.left_title, self.left)
        self.split.addWidget(self.left_box)
        self.split.addWidget(self._titled(self.main_title, self.view))
        self.left_box.hide()
        self.main_title.hide()
        self.legend = Legend(self.view)
        self.view.legend = self.legend
        self.legend.reposition()
        self.heat_legend = HeatLegend(self.view)
        self.view.heat_legend = self.heat_legend
        self.heat_legend.reposition()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.split)
        lay.addWidget(self.stack, 1)
        for v, side in ((self.view, "main"), (self.left, "left")):
            v.nodeClicked.connect(lambda nid, s=side: self._on_node_clicked(s, nid))
            v.backgroundClicked.connect(lambda: self.state.select(None))
            v.groupActivated.connect(self.expand_group)
            v.clusterToggled.connect(self.collapse_group)

    @staticmethod
    def _title_label() -> QLabel:
        lab = QLabel()
        lab.setStyleSheet("background:#eceff1; color:#37474f; padding:2px 8px; font-weight:bold")
        return lab

    def _titled(self, title: QLabel, view: GraphView) -> QWidget:
        box = QWidget(self)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(title)
        lay.addWidget(view, 1)
        return box

    def _action(self, tb: QToolBar, text: str, tip: str, key: str, slot) -> QAction:
        act = QAction(text, self)
        act.setToolTip(tip)
        if key:
            act.setShortcut(QKeySequence(key))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        tb.addAction(act)
        return act

    def _toggle(self, tb: QToolBar, text: str, tip: str, key: str, name: str) -> QAction:
        act = self._action(tb, text, tip, key, lambda on: self.state.set_toggle(name, on))
        act.setCheckable(True)
        act.setChecked(bool(getattr(self.state, name)))
        return act

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
        self._heat_by_stage.clear()
        self._scenes.clear()
        self._jobs.clear()
        self._shown = {"main": -1, "left": -1}
        self._fitted = False
        self.view.set_graph_scene(None)
        self.left.set_graph_scene(None)
        self.stack.setCurrentWidget(self.placeholder)
        self.placeholder.setText("Lowering…\nStages appear here as they complete.")
        self.info.setText("")

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
        job = self.runner.submit(layout_job(snaps[index], self.spec, self.runner), channel=side)
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
        meta = self._jobs.pop(job, None)
        self.info.setText(f"Layout failed: {message.splitlines()[0]}")
        self.message.emit(f"Layout failed: {message.splitlines()[0]}")
        _ = meta

    def _display(self, side: str, index: int, scene: GraphScene) -> None:
        view = self.view if side == "main" else self.left
        self.stack.setCurrentWidget(self.split)
        keep = view.graph_scene() is not None
        view.set_graph_scene(scene, keep_view=keep)
        self._shown[side] = index
        scene.set_show_qparams(self.state.show_qparams)
        self._apply_overlay(side, index, scene)
        scene.set_heat(self.heat_for_stage(index) if self.heat is not None else None)
        self._set_titles()
        if side == "main":
            if not self._fitted or self.state.follow_latest:
                self._fitted = True
                self.initial_view()
            self._apply_selection(center=True)
            self._update_matches()
            lay = scene.layout
            snap = scene.snapshot
            n_groups = sum(1 for i in lay.graph.items.values() if i.is_group)
            fb = sum(1 for n in snap.nodes if n.kind == KIND_FALLBACK)
            self.info.setText(
                f"{snap.index}: {snap.stage} — {len(snap.nodes)} nodes"
                + (f", {n_groups} collapsed groups" if n_groups else "")
                + (f", {fb} fallback{'s' if fb > 1 else ''}" if fb else "")
                + f" · layout {lay.seconds * 1000:.0f} ms{' (cached)' if lay.from_cache else ''}"
                + (" (simple layout: dot unavailable)" if lay.engine != "dot" else ""))
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
        diffs = self.session.diffs
        states: dict[str, str] = {}
        if side == "main" and index < len(diffs) and diffs[index] is not None:
            d = diffs[index]
            states.update({i: "added" for i in d.added})
            states.update({b: "rewritten" for _, b in d.rewritten})
        elif side == "left" and index + 1 < len(diffs) and diffs[index + 1] is not None:
            d = diffs[index + 1]
            states.update({i: "removed" for i in d.removed})
            states.update({a: "rewritten" for a, _ in d.rewritten})
        scene.set_overlay(states)

    # ------------------------------------------------------------------ heat overlay
    def set_heat(self, colors: dict[str, QColor] | None, value_range: tuple[float, float] = (0.0, 60.0),
                 label: str = "", stops: list[QColor] | None = None) -> None:
        """Colour nodes by error: `colors` maps FINAL-graph node ids to fills (None or {}: off).
        Other stages get the colours through provenance; the colour bar replaces the legend."""
        self.heat = dict(colors) if colors else None
        self._heat_by_stage.clear()
        if self.heat is not None:
            self.heat_legend.set_range(value_range[0], value_range[1], label, stops or [])
        for side, v in (("main", self.view), ("left", self.left)):
            scene = v.graph_scene()
            if scene is not None and self._shown[side] >= 0:
                scene.set_heat(self.heat_for_stage(self._shown[side]) if self.heat is not None else None)
        self._update_legends()

    def heat_for_stage(self, index: int) -> dict[str, QColor]:
        """The heat colours of stage `index`: final-graph colours mapped through provenance
        (step, else the same debug handle); a node that several final nodes came from takes the
        hottest (brightest) colour."""
        if self.heat is None:
            return {}
        cached = self._heat_by_stage.get(index)
        if cached is not None:
            return cached
        snaps = self.session.snapshots
        final = self.session.final()
        out: dict[str, QColor] = {}
        if final is None or index >= len(snaps):
            return out
        if index == final.index:
            out = {nid: c for nid, c in self.heat.items() if final.node(nid) is not None}
        else:
            prov = self.session.provenance()
            target = snaps[index]
            by_handle: dict[int, str] = {}
            for n in target.nodes:
                if n.debug_handle is not None:
                    by_handle.setdefault(n.debug_handle, n.id)
            for nid, color in self.heat.items():
                mapped = prov.step(nid, final.index, index)
                if mapped is None:
                    src = final.node(nid)
                    if src is not None and src.debug_handle is not None:
                        mapped = by_handle.get(src.debug_handle)
                if mapped is None:
                    continue
                old = out.get(mapped)
                if old is None or color.lightnessF() > old.lightnessF():
                    out[mapped] = color
        self._heat_by_stage[index] = out
        return out

    def _update_legends(self) -> None:
        show = self.act_legend.isChecked() and not self.state.compare
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
            self.left.graph_scene().set_selected(node_id)
            self.inspectOther.emit(self._shown["left"], node_id)

    # ------------------------------------------------------------------ toggles / groups
    def _on_toggles(self) -> None:
        st = self.state
        for act, on in ((self.act_qparams, st.show_qparams), (self.act_weights, st.show_weights),
                        (self.act_compare, st.compare)):
            if act.isChecked() != on:
                act.setChecked(on)
        for v in (self.view, self.left):
            if v.graph_scene():
                v.graph_scene().set_show_qparams(st.show_qparams)
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
        """First look at a graph: fit if that keeps labels readable, else a readable zoom
        (0.75-1.0) starting at the top of the graph."""
        scene = self.view.graph_scene()
        if scene is None:
            return
        r = scene.sceneRect()
        vp = self.view.viewport()
        k = min(vp.width() / max(r.width(), 1), vp.height() / max(r.height(), 1))
        if k >= 0.75:
            self.view.fit()
            return
        k = max(0.75, min(1.0, (vp.width() - 10) / max(r.width(), 1)))
        self.view.resetTransform()
        self.view.scale(k, k)
        self.view.centerOn(r.center().x(), r.top() + vp.height() / (2 * k))
        self.view.viewChanged.emit()

    def fit(self) -> None:
        scene = self.view.graph_scene()
        if scene is None:
            return
        r = scene.sceneRect()
        vp = self.view.viewport()
        if r.height() > 3 * r.width() and r.height() > vp.height() * 2.5:
            self.view.fit_width()          # tall chains: readable width, start at the top
        else:
            self.view.fit()

    def _update_matches(self) -> None:
        text = self.search.text().strip().lower()
        scene = self.view.graph_scene()
        if scene is None:
            return
        if not text:
            self._matches = []
            scene.set_matches(set())
            self.match_label.setText("")
            return
        snap = scene.snapshot
        self._matches = [n.id for n in snap.nodes
                         if text in n.id.lower() or text in n.target.lower() or text in n.name.lower()
                         or text in n.module_path.lower()]
        self._match_pos = -1
        scene.set_matches(set(self._matches))
        self.match_label.setText(f"  {len(self._matches)} match{'es' if len(self._matches) != 1 else ''}  ")

    def next_match(self) -> None:
        self._update_matches() if self._search_timer.isActive() else None
        self._search_timer.stop()
        if not self._matches:
            return
        self._match_pos = (self._match_pos + 1) % len(self._matches)
        self.match_label.setText(f"  {self._match_pos + 1}/{len(self._matches)}  ")
        self.state.select(self._matches[self._match_pos], center=True)

    def next_fallback(self) -> None:
        """F3: the next portable fallback in this stage, else in the final graph."""
        snaps = self.session.snapshots
        if not snaps or self.state.stage < 0:
            return
        snap = snaps[self.state.stage]
        fbs = [n.id for n in snap.nodes if n.kind == KIND_FALLBACK]
        stage = self.state.stage
        if not fbs:
            final = self.session.final()
            if final is None:
                self.message.emit("No fallbacks in this stage (the final graph is not ready).")
                return
            fbs = [n.id for n in final.nodes if n.kind == KIND_FALLBACK]
            stage = final.index
            if not fbs:
                self.message.emit("No portable fallbacks: every compute op lowered to CMSIS-NN.")
                return
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
        r = scene.sceneRect()
        if path.lower().endswith(".svg"):
            from PySide6.QtSvg import QSvgGenerator

            gen = QSvgGenerator()
            gen.setFileName(path)
            gen.setSize(r.size().toSize())
            gen.setViewBox(QRectF(0, 0, r.width(), r.height()))
            gen.setTitle(f"{scene.snapshot.stage}")
            p = QPainter(gen)
            scene.render(p, QRectF(0, 0, r.width(), r.height()), r)
            p.end()
            return path
        k = min(2.0, 12000 / max(r.width(), r.height(), 1))
        img = QImage(int(r.width() * k), int(r.height() * k), QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(Qt.GlobalColor.white)
        p = QPainter(img)
        p.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        scene.render(p, QRectF(0, 0, img.width(), img.height()), r)
        p.end()
        if not img.save(path):
            raise RuntimeError(f"Could not write {path}")
        return path

    def shutdown(self) -> None:
        self.runner.shutdown()
