"""One graph pane per compare side: app/graph's GraphScene + GraphView drawing that side's final
graph (laid out off the UI thread by backend_core.layout), nodes filled by how their row changed."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backend_core.layout import Layout

from app.graph.navigation import initial_view
from app.graph.scene import GraphScene
from app.graph.view import GraphView
from app.widgets import theme

from .model import DELTA_COLORS, DELTA_RANK, SAME, CompareData


class SidePane(QWidget):
    """Signals: nodeClicked(int side, str node id)."""

    nodeClicked = Signal(int, str)

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

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.scene is not None:     # the pane's size follows the number of sides: a readable zoom again
            initial_view(self.view)
            self._reveal()

    def show_message(self, text: str) -> None:
        self.title.setText(f"{self.title.text()}<br><i>{text}</i>")

    def set_layout(self, data: CompareData, layout: Layout) -> None:
        snap = data.sides[self.side].snapshot
        assert snap is not None
        self.scene = GraphScene(snap, layout, self)
        self.view.set_graph_scene(self.scene)
        colors: dict[str, QColor] = {}
        rows = data.sides[self.side].row_of_node
        for iid, box in self.scene.boxes.items():      # one colour per box (weights folded in keep none)
            vi = box.view_item
            members = vi.members if vi.is_group else (iid,)
            found = [data.delta[rows[m]] for m in members if m in rows]
            d = max(found, key=DELTA_RANK.__getitem__) if found else SAME
            colors[iid] = QColor(DELTA_COLORS[d]) if d != SAME else theme.kind_colors(vi.kind)[0]
        self.scene.set_heat(colors)
        initial_view(self.view)          # fit when labels stay readable, else a readable zoom from the top

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
        if boxes:
            self.view.ensureVisible(boxes[0].sceneBoundingRect(), 40, 40)
