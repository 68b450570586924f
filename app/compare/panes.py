"""One graph pane per compare side: app/graph's GraphScene + GraphView drawing that side's final
graph (laid out off the UI thread by backend_core.analyses.graph_layout), nodes filled by how their row changed."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backend_core.analyses.graph_layout import Layout

from app.graph.navigation import initial_view
from app.graph.scene import GraphScene
from app.graph.view import GraphView
from app.widgets import theme

from .model import DELTA_COLORS, DELTA_RANK, SAME, CompareData


class SidePane(QWidget):
    """Signals: nodeClicked(int side, str node id); viewMoved(int side) when the user pans or zooms."""

    nodeClicked = Signal(int, str)
    viewMoved = Signal(int)

    def __init__(self, side: int, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.title = QLabel(f"<b>{side + 1}. {title}</b>")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = GraphView(self)
        self.view.nodeClicked.connect(lambda nid: self.nodeClicked.emit(self.side, nid))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        lay.addWidget(self.view, 1)
        self.scene: GraphScene | None = None
        self._selection: list[str] = []
        self.box_rows: dict[str, int] = {}         # box id -> the compare row of its first matched member
        self.quiet = False                         # set while another pane drives this one
        self.view.viewChanged.connect(self._moved)
        self.view.horizontalScrollBar().valueChanged.connect(self._moved)
        self.view.verticalScrollBar().valueChanged.connect(self._moved)

    def _moved(self, *_: object) -> None:
        if not self.quiet and self.scene is not None:
            self.viewMoved.emit(self.side)

    def center(self) -> QPointF:
        """The scene point at the middle of the viewport."""
        return self.view.mapToScene(self.view.viewport().rect().center())

    def anchor(self) -> tuple[int, QPointF] | None:
        """The compare row of the matched box nearest the viewport's middle, and the middle's offset
        from that box's centre: what another side lines up with."""
        if self.scene is None or not self.box_rows:
            return None
        c = self.center()
        boxes = self.scene.boxes

        def dist(iid: str) -> float:
            d = boxes[iid].sceneBoundingRect().center() - c
            return d.x() * d.x() + d.y() * d.y()

        iid = min(self.box_rows, key=dist)
        return self.box_rows[iid], c - boxes[iid].sceneBoundingRect().center()

    def follow(self, nodes: list[str], offset: QPointF, zoom: float) -> None:
        """Show the first of `nodes` where the driving pane shows its match, at the same zoom."""
        box = next((b for b in (self.scene.box_for_node(n) for n in nodes) if b is not None), None) \
            if self.scene is not None else None
        if box is None:
            return
        self.quiet = True
        try:
            k = zoom / self.view.zoom_factor()
            if abs(k - 1.0) > 1e-3:
                self.view.scale(k, k)
            self.view.centerOn(box.sceneBoundingRect().center() + offset)
        finally:
            self.quiet = False

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.scene is not None:     # the pane's size follows the number of sides: a readable zoom again
            self.quiet = True
            initial_view(self.view)
            self.quiet = False
            self._reveal()

    def show_message(self, text: str) -> None:
        self.title.setText(f"{self.title.text()}<br><i>{text}</i>")

    def set_layout(self, data: CompareData, layout: Layout) -> None:
        snap = data.sides[self.side].snapshot
        assert snap is not None
        self.scene = GraphScene(snap, layout, self)
        self.box_rows = {}
        self.view.set_graph_scene(self.scene)
        colors: dict[str, QColor] = {}
        rows = data.sides[self.side].row_of_node
        for iid, box in self.scene.boxes.items():      # one colour per box (weights folded in keep none)
            vi = box.view_item
            members = vi.members if vi.is_group else (iid,)
            found = [data.delta[rows[m]] for m in members if m in rows]
            d = max(found, key=DELTA_RANK.__getitem__) if found else SAME
            colors[iid] = QColor(DELTA_COLORS[d]) if d != SAME else theme.kind_colors(vi.kind)[0]
            matched = [rows[m] for m in members if m in rows]
            if matched:
                self.box_rows[iid] = matched[0]
        self.scene.set_heat(colors)
        self.quiet = True
        initial_view(self.view)          # fit when labels stay readable, else a readable zoom from the top
        self.quiet = False

    def select(self, node_ids: list[str]) -> None:
        """Select the row's nodes here (first one outlined, all ringed) and scroll to them."""
        if self.scene is None:
            return
        self.scene.set_selected(node_ids[0] if node_ids else None)
        self.scene.set_matches(set(node_ids))
        self._selection = list(node_ids)
        self._reveal()

    def _reveal(self) -> None:
        if self.scene is None:
            return
        boxes = [b for b in (self.scene.box_for_node(n) for n in self._selection) if b is not None]
        if boxes:                      # a selection shows on every side by itself: no view sync
            self.quiet = True
            self.view.ensureVisible(boxes[0].sceneBoundingRect(), 40, 40)
            self.quiet = False
