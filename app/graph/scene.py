"""A QGraphicsScene built from one snapshot and its layout, with lookups from snapshot node
ids to the items that show them (a node, or the collapsed group that contains it)."""
from __future__ import annotations

import html

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene

from backend_core.analyses.graph_layout import Layout, tensor_text
from backend_core.common.snapshot.model import KIND_LABELS, GraphSnapshot, NodeSnapshot, QParam

from app.widgets import theme
from app.graph.items import BoxItem, ClusterItem, EdgeItem


def qparam_short(q: QParam | None) -> str:
    if q is None:
        return ""
    if q.per_channel and q.scales:
        return f"per-ch(n={len(q.scales)}) zp={q.zero_point}"
    return f"s={q.scale:.4g} zp={q.zero_point}"


def node_tooltip(n: NodeSnapshot) -> str:
    """Hover text: op, tensor, quant params and (for a fallback) why."""
    rows = [f"<b>{html.escape(n.target)}</b>", f"{html.escape(n.name)} · {KIND_LABELS.get(n.kind, n.kind)}"]
    t = tensor_text(n.dtype, n.shape)
    if t:
        rows.append(f"out: {html.escape(t)}")
    for i, q in n.input_qparams:
        rows.append(f"in[{i}] q: {html.escape(q.summary())}")
    if n.output_qparams is not None:
        rows.append(f"out q: {html.escape(n.output_qparams.summary())}")
    if n.requant is not None and n.requant.effective_scales:
        sc = n.requant.effective_scales
        rows.append(f"requant: {len(sc)} scale(s), {min(sc):.3g}…{max(sc):.3g}")
    if n.module_path:
        rows.append(f"module: {html.escape(n.module_path)} {html.escape(n.module_type)}")
    if n.fallback is not None:
        rows.append(f"<span style='color:#b71c1c'>⚠ {html.escape(n.fallback.category)}: "
                    f"{html.escape(n.fallback.message)}</span>")
    return "<br>".join(rows)


class GraphScene(QGraphicsScene):
    """Items for one stage. Holds no pipeline state beyond the snapshot it draws."""

    MARGIN = 30.0

    def __init__(self, snapshot: GraphSnapshot, layout: Layout, parent=None) -> None:
        super().__init__(parent)
        self.snapshot = snapshot
        self.layout = layout
        self.setBackgroundBrush(theme.BACKGROUND)
        self.boxes: dict[str, BoxItem] = {}
        self.clusters: dict[str, ClusterItem] = {}
        self.edges: list[EdgeItem] = []
        self._edges_of: dict[str, list[EdgeItem]] = {}
        self._selected: str | None = None
        self._build()
        self.setSceneRect(QRectF(-self.MARGIN, -self.MARGIN, layout.width + 2 * self.MARGIN,
                                 layout.height + 2 * self.MARGIN))
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)

    def _build(self) -> None:
        vg = self.layout.graph
        for path, (x, y, w, h) in self.layout.clusters.items():
            c = vg.clusters.get(path)
            if c is None:
                continue
            item = ClusterItem(c, QRectF(x, y, w, h))
            self.addItem(item)
            self.clusters[path] = item
        for iid, (x, y, w, h) in self.layout.boxes.items():
            box_item = BoxItem(vg.items[iid], QRectF(x, y, w, h))
            self.addItem(box_item)
            self.boxes[iid] = box_item
        for f in self.snapshot.extra.get("preflight", ()):      # pre-flight markers (final stage)
            box = self.box_for_node(f.get("node"))
            if box is not None and box.preflight != "will fail":
                box.preflight = f.get("certainty", "will fail")
        edges = self.snapshot.edges
        pair_edges = {(e.src, e.dst): e for e in vg.edges}
        for route in self.layout.routes:
            ve = pair_edges.get((route.src, route.dst))
            label = qlabel = ""
            if ve is not None and ve.edges:
                e = edges[ve.edges[0]]
                # a float edge (e.g. out of a dequantize) has no qparams, even when the node
                # after it records the dequantize's parameters as its input's
                qlabel = "" if (e.dtype or "").startswith(("float", "bfloat")) else qparam_short(e.qparams)
                if not vg.items[route.src].beside:    # a weight's box already says its tensor
                    label = tensor_text(e.dtype, e.shape)
            edge_item = EdgeItem(route, label, qlabel)
            self.addItem(edge_item)
            self.edges.append(edge_item)
            self._edges_of.setdefault(route.src, []).append(edge_item)
            self._edges_of.setdefault(route.dst, []).append(edge_item)

    # ------------------------------------------------------------------ lookups
    def item_id_for_node(self, node_id: str) -> str | None:
        iid = self.layout.graph.item_of_node.get(node_id)
        return iid if iid in self.boxes else None

    def box_for_node(self, node_id: str | None) -> BoxItem | None:
        if node_id is None:
            return None
        iid = self.item_id_for_node(node_id)
        return self.boxes.get(iid) if iid else None

    def box_at(self, pos: QPointF) -> BoxItem | None:
        for it in self.items(pos):
            if isinstance(it, BoxItem):
                return it
        return None

    def cluster_header_at(self, pos: QPointF) -> ClusterItem | None:
        best = None
        for it in self.items(pos):
            if isinstance(it, ClusterItem) and it.header_rect().contains(pos):
                if best is None or it.cluster.depth > best.cluster.depth:
                    best = it
        return best

    def edge_at(self, pos: QPointF) -> EdgeItem | None:
        area = QRectF(pos.x() - 3, pos.y() - 3, 6, 6)
        for it in self.items(area):
            if isinstance(it, EdgeItem):
                return it
        return None

    def tooltip_at(self, pos: QPointF) -> str:
        box = self.box_at(pos)
        if box is not None:
            vi = box.view_item
            if vi.is_group:
                fb = f"<br><span style='color:#b71c1c'>⚠ {vi.fallbacks} fallback(s) inside</span>" if vi.fallbacks else ""
                return (f"<b>{html.escape(vi.module_path)}</b><br>{len(vi.members)} nodes (collapsed)"
                        f"{fb}<br><i>double-click to expand</i>")
            n = self.snapshot.node(vi.id)
            tip = node_tooltip(n) if n is not None else ""
            teal = theme.PATCHED.name()
            if box.patches:
                tip += f"<br><span style='color:{teal}'>runs once per patch: ×{box.patches} (the schedule found)</span>"
            if box.patch_grid:
                rows, cols = box.patch_grid
                tip += f"<br><span style='color:{teal}'>read in {rows}×{cols} patches, each with its halo</span>"
            return tip
        edge = self.edge_at(pos)
        if edge is not None:
            r = edge.route
            text = f"{html.escape(r.src)} → {html.escape(r.dst)}<br>{html.escape(edge.label)}"
            if edge.qlabel:
                text += f"<br>q: {html.escape(edge.qlabel)}"
            return text
        header = self.cluster_header_at(pos)
        if header is not None:
            return f"<b>{html.escape(header.cluster.label)}</b><br><i>click to collapse</i>"
        return ""

    # ------------------------------------------------------------------ state
    def set_selected(self, node_id: str | None) -> BoxItem | None:
        iid = self.item_id_for_node(node_id) if node_id else None
        if self._selected == iid:
            return self.boxes.get(iid) if iid else None
        if self._selected in self.boxes:
            self.boxes[self._selected].set_state(selected=False)
            for e in self._edges_of.get(self._selected, []):
                e.highlight = False
                e.update()
        self._selected = iid
        if iid is None:
            return None
        box = self.boxes[iid]
        box.set_state(selected=True)
        for e in self._edges_of.get(iid, []):
            e.highlight = True
            e.update()
        return box

    def set_overlay(self, states: dict[str, str]) -> None:
        """node id -> added | removed | rewritten | modified (other nodes are cleared)."""
        by_item: dict[str, str] = {}
        for nid, st in states.items():
            iid = self.item_id_for_node(nid)
            if iid is not None and iid == nid:     # groups keep their own look
                by_item[iid] = st
        for iid, box in self.boxes.items():
            box.set_state(overlay=by_item.get(iid, ""))

    def set_matches(self, node_ids: set[str]) -> None:
        items = {self.item_id_for_node(n) for n in node_ids}
        for iid, box in self.boxes.items():
            box.set_state(match=iid in items)

    def set_show_qparams(self, on: bool) -> None:
        for e in self.edges:
            if e.show_qparams != on:
                e.show_qparams = on
                e.update()

    def set_patches(self, nodes: dict[str, int], grid: tuple[int, int] | None, input_node: str | None) -> None:
        """A schedule's marks: node id -> patches it runs for (others cleared), the P×Q grid on `input_node`."""
        marked = {self.item_id_for_node(n): k for n, k in nodes.items()}
        grid_item = self.item_id_for_node(input_node) if input_node and grid else None
        for iid, box in self.boxes.items():
            box.set_patches(marked.get(iid, 0), grid if iid == grid_item else None)

    def set_heat(self, colors: dict[str, QColor] | None) -> None:
        """Heat overlay: node id -> fill colour (None: overlay off). A collapsed group takes
        its hottest member's colour (the brightest: the heat map runs dark -> bright)."""
        if colors is None:
            for box in self.boxes.values():
                box.set_heat(False, None)
            return
        by_item: dict[str, QColor] = {}
        for nid, color in colors.items():
            iid = self.item_id_for_node(nid)
            if iid is None:
                continue
            old = by_item.get(iid)
            if old is None or color.lightnessF() > old.lightnessF():
                by_item[iid] = color
        for iid, box in self.boxes.items():
            box.set_heat(True, by_item.get(iid))
