"""Immutable, JSON-serialisable snapshots of one pipeline stage's graph.

Everything downstream (views, diffs, reports, caches) reads these, never live FX objects:
Cortex-M passes mutate their input graphs, so a live object would change under a viewer.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any


# Node kinds, shared by the classifier, the reports and the GUI legend.
KIND_CMSIS = "cmsis_nn"                 # cortex_m.* compute backed by a CMSIS-NN kernel
KIND_FALLBACK = "portable_fallback"     # aten compute left on portable kernels (final graph)
KIND_ATEN = "aten_compute"              # aten compute before lowering finished
KIND_DATA = "data_movement"             # view/clone/permute... on portable kernels
KIND_QUANT = "quant_boundary"           # quantize / dequantize
KIND_PLUMBING = "plumbing"              # alloc, getitem, output
KIND_INPUT = "input"                    # user inputs
KIND_WEIGHT = "weight"                  # parameters, buffers, constants
KIND_DELEGATE = "delegate"              # a call into another backend's delegate blob (.pte read back)

ALL_KINDS = (KIND_CMSIS, KIND_FALLBACK, KIND_ATEN, KIND_DATA, KIND_QUANT, KIND_PLUMBING,
             KIND_INPUT, KIND_WEIGHT, KIND_DELEGATE)
KIND_LABELS = {
    KIND_CMSIS: "CMSIS-NN kernel",
    KIND_FALLBACK: "portable compute fallback",
    KIND_ATEN: "ATen compute (not lowered yet)",
    KIND_DATA: "data movement",
    KIND_QUANT: "quantization boundary",
    KIND_PLUMBING: "plumbing",
    KIND_INPUT: "input",
    KIND_WEIGHT: "weight / constant",
    KIND_DELEGATE: "delegated to another backend",
}


@dataclass(frozen=True)
class QParam:
    """One tensor's quantization, in one form whatever the stage it was read from."""

    dtype: str
    scale: float                       # per-tensor scale, or the mean of per-channel scales
    zero_point: int
    qmin: int
    qmax: int
    per_channel: bool = False
    axis: int | None = None
    scales: tuple[float, ...] = ()     # per-channel scales (empty for per-tensor)
    source: str = ""                   # "q/dq args", "meta", "cortex_m args"

    def summary(self) -> str:
        if self.per_channel and not self.scales:
            return f"{self.dtype} per-channel(axis={self.axis}) mean scale={self.scale:.3g} zp={self.zero_point}"
        if self.per_channel and self.scales:
            return (f"{self.dtype} per-channel(axis={self.axis}, n={len(self.scales)}) "
                    f"scale∈[{min(self.scales):.3g}, {max(self.scales):.3g}] zp={self.zero_point}")
        return f"{self.dtype} scale={self.scale:.6g} zp={self.zero_point}"


@dataclass(frozen=True)
class Requant:
    """A cortex_m op's fixed-point requantisation, decoded back to effective scales."""

    multipliers: tuple[int, ...]
    shifts: tuple[int, ...]
    effective_scales: tuple[float, ...]
    input_offset: int | None = None
    output_offset: int | None = None
    activation_min: int | None = None
    activation_max: int | None = None


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    code: str = ""
    function: str = ""
    # the calls that led there, outermost (the user's own line) first, each "file:line in function: code";
    # empty when the line is the only model frame
    chain: tuple[str, ...] = ()

    @property
    def full(self) -> str:
        """`path/to/file.py:LINE`: what the JSON and an editor's go-to-line take."""
        return f"{self.file}:{self.line}"

    @property
    def short(self) -> str:
        """`file.py:LINE`: how a message names the line (the path is in the JSON)."""
        return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"


@dataclass(frozen=True)
class UserOp:
    """The op the user wrote, as the quantizer saw it (the node of the "quantized" stage a
    fallback traces back to through to_edge's decompositions and the passes)."""

    target: str                        # e.g. aten.relu6.default
    name: str                          # node name at quantization time
    source: str | None = None          # "file:line" of the user's code
    module: str = ""                   # nn.Module path, e.g. "features.3"
    module_type: str = ""              # e.g. "LSTM"


@dataclass(frozen=True)
class FallbackReason:
    """Why a compute node stayed on portable kernels: data, not a log line."""

    category: str
    message: str
    evidence: tuple[str, ...]
    suggestion: str = ""
    stage: str = ""                    # the stage that last touched the node
    user_op: UserOp | None = None      # the op at quantization time this node came from
    group: str = ""                    # nodes one user op decomposed into share a group id
    verified: str = ""                 # "verified" | "not verified" | "" (not tried)
    verification: str = ""             # what was tried and what the re-lowering showed


@dataclass(frozen=True)
class NodeSnapshot:
    id: str                            # unique within the stage (the FX node name)
    name: str
    fx_op: str                         # placeholder | call_function | get_attr | output
    target: str                        # as ExecuTorch prints it, e.g. aten.convolution.default
    kind: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    inputs: tuple[str, ...] = ()       # ids of argument nodes, in argument order
    args: tuple[str, ...] = ()         # short text of every argument, for the inspector
    input_qparams: tuple[tuple[int, QParam], ...] = ()
    output_qparams: QParam | None = None
    requant: Requant | None = None
    debug_handle: int | None = None
    module_path: str = ""              # nn.Module path, e.g. "features.3.conv"
    module_type: str = ""
    source: SourceLocation | None = None
    origin: tuple[str, ...] = ()       # names of the nodes this came from (from_node chain)
    flags: tuple[tuple[str, str], ...] = ()   # meta["custom"]["cortex_m"] and similar
    schema: str = ""
    fallback: FallbackReason | None = None
    dim_order: tuple[int, ...] | None = None   # of the (first) output tensor, as the .pte stores it


@dataclass(frozen=True)
class EdgeSnapshot:
    src: str
    dst: str
    arg_index: int
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    qparams: QParam | None = None


@dataclass(frozen=True)
class GraphSnapshot:
    stage: str                         # e.g. "float export", "FoldAndAnnotateQParamsPass"
    index: int                         # position in the pipeline
    kind: str                          # export | quantize | edge | pass | final
    nodes: tuple[NodeSnapshot, ...]
    edges: tuple[EdgeSnapshot, ...]
    seconds: float = 0.0               # time the stage took
    runnable_on_host: bool = True
    log: tuple[str, ...] = ()          # warnings the stage logged
    changed: bool = True               # False when a pass returned its input unchanged
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def fallbacks(self) -> list[NodeSnapshot]:
        """The nodes left on portable kernels (the final graph's fallbacks): the one definition of the list."""
        return [n for n in self.nodes if n.kind == KIND_FALLBACK]

    def node(self, node_id: str) -> NodeSnapshot | None:
        return self.node_map().get(node_id)

    def node_map(self) -> dict[str, NodeSnapshot]:
        cache = self.__dict__.get("_node_map")
        if cache is None:
            cache = {n.id: n for n in self.nodes}
            object.__setattr__(self, "_node_map", cache)
        return cache

    def content_hash(self) -> str:
        """Hash of the graph structure and labels, for layout caches."""
        h = hashlib.sha1()
        for n in self.nodes:
            h.update(f"{n.id}|{n.target}|{n.kind}|{n.shape}|{n.module_path};".encode())
        for e in self.edges:
            h.update(f"{e.src}>{e.dst}:{e.arg_index};".encode())
        return h.hexdigest()

    def count_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for n in self.nodes:
            counts[n.kind] = counts.get(n.kind, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (dataclasses.asdict is ~5x slower on big graphs: this runs per stage)."""
        return {"stage": self.stage, "index": self.index, "kind": self.kind,
                "nodes": [_node_dict(n) for n in self.nodes],
                "edges": [{"src": e.src, "dst": e.dst, "arg_index": e.arg_index, "dtype": e.dtype,
                           "shape": list(e.shape) if e.shape is not None else None,
                           "qparams": _qp_dict(e.qparams)} for e in self.edges],
                "seconds": self.seconds, "runnable_on_host": self.runnable_on_host,
                "log": list(self.log), "changed": self.changed, "extra": dict(self.extra)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), default=_json_default)



def _qp_dict(q: QParam | None) -> dict[str, Any] | None:
    if q is None:
        return None
    return {"dtype": q.dtype, "scale": q.scale, "zero_point": q.zero_point, "qmin": q.qmin,
            "qmax": q.qmax, "per_channel": q.per_channel, "axis": q.axis, "scales": list(q.scales),
            "source": q.source}


def _node_dict(n: NodeSnapshot) -> dict[str, Any]:
    return {
        "id": n.id, "name": n.name, "fx_op": n.fx_op, "target": n.target, "kind": n.kind,
        "dtype": n.dtype, "shape": list(n.shape) if n.shape is not None else None,
        "inputs": list(n.inputs), "args": list(n.args),
        "input_qparams": [[i, _qp_dict(q)] for i, q in n.input_qparams],
        "output_qparams": _qp_dict(n.output_qparams),
        "requant": _requant_dict(n.requant),
        "debug_handle": n.debug_handle, "module_path": n.module_path, "module_type": n.module_type,
        "source": _source_dict(n.source), "origin": list(n.origin),
        "flags": [list(f) for f in n.flags], "schema": n.schema,
        "fallback": asdict(n.fallback) if n.fallback is not None else None,
        "dim_order": list(n.dim_order) if n.dim_order is not None else None,
    }


def _source_dict(s: SourceLocation | None) -> dict[str, Any] | None:
    """asdict() deep-copies each field (DS-CNN: 6.6 ms of a 10 ms report); the same dict, chain a tuple."""
    if s is None:
        return None
    return {"file": s.file, "line": s.line, "code": s.code, "function": s.function, "chain": tuple(s.chain)}


def _requant_dict(r: Requant | None) -> dict[str, Any] | None:
    """asdict() walks every per-channel value (MobileNetV2: 428 KB of them, 0.15 s per stage)."""
    if r is None:
        return None
    return {k: list(v) if isinstance(v, tuple) else v for k, v in vars(r).items()}


def _json_default(o: Any) -> Any:
    return str(o)


def _qp(d: dict[str, Any] | None) -> QParam | None:
    return None if d is None else _qparam(d)


def _qparam(d: dict[str, Any]) -> QParam:
    d = dict(d)
    d["scales"] = tuple(d.get("scales") or ())
    return QParam(**d)


def _tuple_or_none(v: Any) -> tuple[int, ...] | None:
    return tuple(v) if v is not None else None


def _requant(rq: dict[str, Any]) -> Requant:
    kw: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in rq.items()}
    return Requant(**kw)


def node_from_dict(d: dict[str, Any]) -> NodeSnapshot:
    fb = d.get("fallback")
    rq = d.get("requant")
    src = d.get("source")
    return NodeSnapshot(
        id=d["id"], name=d["name"], fx_op=d["fx_op"], target=d["target"], kind=d["kind"],
        dtype=d.get("dtype"), shape=_tuple_or_none(d.get("shape")),
        inputs=tuple(d.get("inputs", ())), args=tuple(d.get("args", ())),
        input_qparams=tuple((int(i), _qparam(q)) for i, q in d.get("input_qparams", ())),
        output_qparams=_qp(d.get("output_qparams")),
        requant=_requant(rq) if rq else None,
        debug_handle=d.get("debug_handle"), module_path=d.get("module_path", ""),
        module_type=d.get("module_type", ""),
        source=SourceLocation(**{**src, "chain": tuple(src.get("chain") or ())}) if src else None,
        origin=tuple(d.get("origin", ())),
        flags=tuple(tuple(f) for f in d.get("flags", ())),
        schema=d.get("schema", ""),
        fallback=_fallback_from_dict(fb) if fb else None,
        dim_order=_tuple_or_none(d.get("dim_order")),
    )


def _fallback_from_dict(fb: dict[str, Any]) -> FallbackReason:
    uo = fb.get("user_op")
    return FallbackReason(**{**fb, "evidence": tuple(fb.get("evidence", ())),
                             "user_op": UserOp(**uo) if uo else None})


def snapshot_from_dict(d: dict[str, Any]) -> GraphSnapshot:
    return GraphSnapshot(
        stage=d["stage"], index=d["index"], kind=d["kind"],
        nodes=tuple(node_from_dict(n) for n in d["nodes"]),
        edges=tuple(EdgeSnapshot(src=e["src"], dst=e["dst"], arg_index=e["arg_index"],
                                 dtype=e.get("dtype"), shape=_tuple_or_none(e.get("shape")),
                                 qparams=_qp(e.get("qparams"))) for e in d["edges"]),
        seconds=d.get("seconds", 0.0), runnable_on_host=d.get("runnable_on_host", True),
        log=tuple(d.get("log", ())), changed=d.get("changed", True), extra=d.get("extra", {}),
    )
