"""Where each layer of the final graph lives in every other runnable stage.

A "layer" is a compute or data-movement node of the final graph; its "tensor point" in another
stage is the node whose output holds the same tensor:

* stages with debug handles (edge and every pass): the node with the layer's `debug_handle`
  (set by to_edge, inherited by rewritten nodes), then forward through what the lowering fused
  into the layer (getitem, relu/hardtanh/clamp) to the quantize node that puts the value on its
  int8 grid. A float layer (a portable fallback) stops before the quantize.
* the PT2E module and the float export carry no debug handles: the edge anchor's `from_node`
  names lead into the PT2E module (whose names are the float export's), where the same walk is
  repeated; the float value is the quantize node's input, looked up by name in the float export.

Layers without a debug handle (pads, transposes and views the passes create) and all but the
last layer of a decomposed op get a *derived* reference: the same op run on the references of
its inputs (see final_run.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.snapshot.capture import target_name
from backend_core.common.snapshot.classify import is_quant_boundary, op_base_name
from backend_core.common.snapshot.model import (KIND_INPUT, KIND_PLUMBING, KIND_QUANT, KIND_WEIGHT, GraphSnapshot,
                              NodeSnapshot, QParam)
from backend_core.common.snapshot.qparams import qparam_from_quant_args
from backend_core.analyses.numerics.capture import StageProgram

ACTIVATIONS = frozenset({"relu", "relu_", "hardtanh", "hardtanh_", "clamp", "clamp_", "relu6"})


@dataclass(frozen=True)
class Point:
    """One tensor in one stage: the node and, for integer tensors, how to dequantize it."""

    node: str
    scale: float | None = None       # None: a float tensor
    zero_point: int = 0
    qmin: int = -128
    qmax: int = 127


@dataclass
class LayerPlan:
    node: str                                  # final-graph node name == final snapshot id
    index: int
    snap: NodeSnapshot
    qparam: QParam | None                      # of the final output (inherited for pads/views)
    is_int: bool
    reference: str = "mapped"                  # mapped | derived
    points: dict[str, Point] = field(default_factory=dict)   # stage name -> point
    float_point: Point | None = None
    fq_point: Point | None = None

    @property
    def final_point(self) -> Point:
        q = self.qparam
        if self.is_int and q is not None:
            return Point(self.node, q.scale, q.zero_point, q.qmin, q.qmax)
        return Point(self.node)


# -- node predicates ------------------------------------------------------------------------
def tname(n: Any) -> str:
    return target_name(n.target) if n.op == "call_function" else ""


def base(n: Any) -> str:
    return op_base_name(tname(n)) if n.op == "call_function" else ""


def is_quantize(n: Any) -> bool:
    return n.op == "call_function" and base(n).startswith("quantize_per_")


def is_getitem(n: Any) -> bool:
    return n.op == "call_function" and tname(n).endswith("getitem")


def is_activation(n: Any) -> bool:
    return n.op == "call_function" and base(n) in ACTIVATIONS


def is_alloc(n: Any) -> bool:
    return n.op == "call_function" and tname(n).startswith("memory.")


def out_is_int(n: Any) -> bool:
    if is_quantize(n):
        return True
    v = n.meta.get("val")
    if isinstance(v, (list, tuple)):
        v = v[0] if v else None
    dt = getattr(v, "dtype", None)
    return dt is not None and not dt.is_floating_point and str(dt) != "torch.bool"


def debug_handle(n: Any) -> int | None:
    dh = n.meta.get("debug_handle")
    if isinstance(dh, (list, tuple)):
        dh = dh[0] if dh else None
    return dh if isinstance(dh, int) else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def point_of(n: Any, fallback: QParam | None) -> Point:
    """The Point of node `n`: quantize args, else output_qparams meta, else `fallback`."""
    if is_quantize(n) and "per_tensor" in base(n):
        s, zp = (_num(n.args[1]), _num(n.args[2])) if len(n.args) > 4 else (None, None)
        if s is not None and zp is not None:
            return Point(n.name, s, int(zp), int(n.args[3]), int(n.args[4]))
    if out_is_int(n):
        meta = n.meta.get("output_qparams")
        q = qparam_from_quant_args(meta.get(0)) if isinstance(meta, dict) and meta else None
        q = q or fallback
        if q is not None:
            return Point(n.name, q.scale, q.zero_point, q.qmin, q.qmax)
        return Point(n.name, 1.0, 0)                       # raw integers, no scale known
    return Point(n.name)


# -- walking -------------------------------------------------------------------------------
def walk(anchor: Any, want_int: bool, stop_handles: frozenset[int] = frozenset()
         ) -> tuple[Any, tuple[str, ...]]:
    """From the op's own node forward to the node holding the layer's output tensor."""
    cur = anchor
    steps: list[str] = []
    while True:
        if want_int and out_is_int(cur):
            return cur, tuple(steps)
        users = list(cur.users)
        if len(users) != 1:
            return cur, tuple(steps)
        u = users[0]
        if is_getitem(u) and u.args[1] == 0:
            cur, steps = u, steps + ["getitem"]
            continue
        if not want_int:
            return cur, tuple(steps)
        dh = debug_handle(u)
        if is_activation(u) and (dh is None or dh not in stop_handles or dh == debug_handle(anchor)):
            cur, steps = u, steps + ["act"]
            continue
        if is_quantize(u):
            return u, tuple(steps + ["q"])
        return cur, tuple(steps)


def replay(anchor: Any, steps: tuple[str, ...]) -> Any | None:
    """Follow the same kinds of steps in a graph without debug handles (the PT2E module)."""
    cur = anchor
    for kind in steps:
        users = list(cur.users)
        if len(users) != 1:
            return None if kind == "q" else cur
        u = users[0]
        if kind == "getitem":
            if is_getitem(u):
                cur = u
            continue                     # aten.layer_norm there, native_layer_norm + getitem here
        if kind == "act" and is_activation(u):
            cur = u
        elif kind == "q" and is_quantize(u):
            cur = u
        else:
            return None
    return cur


# -- the plan ------------------------------------------------------------------------------
def is_layer(s: NodeSnapshot) -> bool:
    if s.fx_op != "call_function" or s.kind in (KIND_PLUMBING, KIND_WEIGHT, KIND_INPUT):
        return False
    if s.kind == KIND_QUANT and not op_base_name(s.target).startswith("quantize_per_"):
        return False                                         # dequantize: same values as its input
    return s.dtype is not None


def _inherited_qparam(s: NodeSnapshot, snap: GraphSnapshot) -> QParam | None:
    """Pads, views and transposes keep their input's quantization."""
    seen = 0
    cur: NodeSnapshot | None = s
    while cur is not None and seen < 16:
        if cur.output_qparams is not None:
            return cur.output_qparams
        srcs = [snap.node(i) for i in cur.inputs]
        srcs = [x for x in srcs if x is not None and x.kind not in (KIND_WEIGHT, KIND_PLUMBING)]
        cur = srcs[0] if srcs else None
        seen += 1
    return None


def build_plan(stages: list[StageProgram], final_snapshot: GraphSnapshot) -> list[LayerPlan]:
    final = stages[-1]
    fgm = final.graph_module
    fnodes = {n.name: n for n in fgm.graph.nodes}
    layers: list[LayerPlan] = []
    for s in final_snapshot.nodes:
        if not is_layer(s) or s.id not in fnodes:
            continue
        is_int = not (s.dtype or "").startswith(("float", "bfloat"))
        qp = s.output_qparams or (_inherited_qparam(s, final_snapshot) if is_int else None)
        layers.append(LayerPlan(s.id, len(layers), s, qp, is_int))

    # All but the last final layer sharing a debug handle are derived (decompositions).
    last_with_dh: dict[int, str] = {}
    for lp in layers:
        if lp.snap.debug_handle is not None:
            last_with_dh[lp.snap.debug_handle] = lp.node
    handles = frozenset(last_with_dh)

    dh_stages = [st for st in stages[:-1] if st.kind in ("edge", "pass", "final")]
    bridge = next((st for st in dh_stages if st.kind == "edge"), dh_stages[0] if dh_stages else None)
    fq_stage = next((st for st in stages if st.kind == "quantize"), None)
    float_stage = next((st for st in stages if st.kind == "export"), None)
    index = {st.name: _by_handle(st.graph_module) for st in dh_stages}
    fq_nodes = {n.name: n for n in fq_stage.graph_module.graph.nodes} if fq_stage else {}
    float_nodes = {n.name: n for n in float_stage.graph_module.graph.nodes} if float_stage else {}

    for lp in layers:
        dh = lp.snap.debug_handle
        if dh is None or last_with_dh.get(dh) != lp.node:
            lp.reference = "derived"
            continue
        role_q = op_base_name(lp.snap.target).startswith("quantize_per_")
        bridge_anchor = None
        bridge_steps: tuple[str, ...] = ()
        for st in dh_stages:
            anchor = _anchor(index[st.name].get(dh, []), role_q, lp.snap.target)
            if anchor is None:
                continue
            node, steps = walk(anchor, lp.is_int, handles)
            if lp.is_int and not out_is_int(node):
                continue                     # the tensor is not on an int grid in this stage
            lp.points[st.name] = point_of(node, lp.qparam)
            if st is bridge:
                bridge_anchor, bridge_steps = anchor, steps
        if fq_stage is None or bridge_anchor is None:
            lp.reference = "derived" if not lp.points else lp.reference
            continue
        fq_anchor = _by_origin(bridge_anchor, fq_nodes, role_q)
        fq_node = replay(fq_anchor, bridge_steps) if fq_anchor is not None else None
        if fq_node is None or (lp.is_int and not is_quantize(fq_node)):
            lp.reference = "derived"
            continue
        lp.fq_point = point_of(fq_node, lp.qparam)
        lp.points[fq_stage.name] = lp.fq_point
        pre = fq_node.args[0] if is_quantize(fq_node) else fq_node
        name = getattr(pre, "name", None)
        if name is not None and name in float_nodes and float_stage is not None:
            lp.float_point = Point(name)
            lp.points[float_stage.name] = lp.float_point
    return layers


def _by_handle(gm: Any) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for n in gm.graph.nodes:
        dh = debug_handle(n)
        if dh is not None and n.op == "call_function":
            out.setdefault(dh, []).append(n)
    return out


def _anchor(cands: list[Any], role_q: bool, final_target: str) -> Any | None:
    if role_q:
        cands = [n for n in cands if is_quantize(n)]
    else:
        cands = [n for n in cands if not is_quant_boundary(tname(n)) and not is_getitem(n)
                 and not is_alloc(n)]
    if not cands:
        return None
    same = [n for n in cands if tname(n) == final_target]
    return same[-1] if same else cands[-1]


def _by_origin(anchor: Any, nodes: dict[str, Any], role_q: bool) -> Any | None:
    """The PT2E-module node an edge node came from (from_node chain, nearest first)."""
    names: list[str] = []
    stack = list(anchor.meta.get("from_node") or [])
    while stack and len(names) < 16:
        src = stack.pop(0)
        nm = getattr(src, "name", None)
        if nm and nm not in names:
            names.append(nm)
        stack.extend(getattr(src, "from_node", None) or [])
    names.append(anchor.name)
    for nm in names:
        n = nodes.get(nm)
        if n is None or n.op != "call_function":
            continue
        if role_q == is_quantize(n) and not (not role_q and is_quant_boundary(tname(n))):
            return n
    return None
