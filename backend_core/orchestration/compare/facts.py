"""What a compare needs to know about one side, as plain JSON-ready data (`SideFacts`).

Everything after loading (matching, rows, deltas, the gate, a baseline file) reads these, never a
live lowering: a baseline is a SideFacts saved to disk, and a baseline made on another machine
compares with a fresh lowering like any other side."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

# A group's status on one side (the user op's fate in that lowering).
LOWERED = "lowered"          # a CMSIS-NN kernel (cortex_m.*)
FALLBACK = "fallback"        # a portable kernel (aten.*): the fallback
FUSED = "fused"              # no final node: folded into the op that produced its input (a relu)
GONE = "gone"                # no final node and nothing it fused into (removed by a pass)
DATA = "data movement"       # only view / clone / permute nodes
BOUNDARY = "q/dq"            # only quantize / dequantize kernels
DELEGATE = "delegate"        # a call into another backend
STATUSES = (LOWERED, FALLBACK, FUSED, GONE, DATA, BOUNDARY, DELEGATE)

PROV_FULL = "full"           # the op the user wrote is known (a lowering, its JSON, an ETRecord)
PROV_WEAK = "weak"           # a bare program: only operator order, ops and shapes


# to_executorch() turns a view_copy whose output can alias its input into memory.view: the same op.
_SAME_OP = {"memory.view": "aten.view_copy"}


def op_key(op: str) -> str:
    """`cortex_m::quantized_conv2d.out`, `cortex_m.quantized_conv2d.default` -> `cortex_m.quantized_conv2d`."""
    parts = op.replace("::", ".").split(".")
    key = ".".join(parts[:2]) if len(parts) >= 2 else op
    return _SAME_OP.get(key, key)


@dataclass
class NodeFact:
    """One final-graph node a group became."""

    id: str
    op: str                          # as the final graph prints it, e.g. cortex_m.quantized_conv2d.default
    kind: str                        # snapshot kind
    index: int                       # position among the final graph's op nodes (execution order)
    shape: list[int] | None = None
    dtype: str | None = None


@dataclass
class OpGroup:
    """One op the user wrote (at quantisation time) and the final nodes it became on one side."""

    key: str                         # unique on its side: module|op|file:line|k
    op: str                          # the op at quantisation time (aten.layer_norm.default), or the node's op
    name: str = ""                   # its node name at quantisation time
    module: str = ""                 # nn.Module path
    module_type: str = ""
    source: str | None = None        # "file:line" of the user's code
    code: str = ""                   # that line's text (matches a line that moved in an edit)
    provenance: str = "user_op"      # user_op | node (no quantisation-time op traced) | none (weak side)
    anchor: str = ""                 # a q/dq of no user op: "after `layer_norm`" (the user op it borders)
    status: str = LOWERED
    nodes: list[NodeFact] = field(default_factory=list)
    fused_into: str | None = None    # key of the group it was folded into
    category: str = ""               # fallback category, reason, fix (first fallback node)
    reason: str = ""
    suggestion: str = ""
    qparams: dict[str, Any] = field(default_factory=dict)
    arena_bytes: int | None = None   # most planned bytes alive while its nodes run (memory timeline)
    scratch_bytes: int | None = None # CMSIS-NN scratch its kernels take (memory timeline)
    out_bytes: int | None = None     # bytes of its last node's output tensor
    instructions: int | None = None  # sum over its nodes (profile), in the profile's unit
    ms: float | None = None          # the cycle estimate's milliseconds over its nodes (profile)
    sqnr_db: float | None = None     # lowered vs float at its last measured node (numerics)

    @property
    def order(self) -> int:
        return self.nodes[0].index if self.nodes else -1

    @property
    def file_line(self) -> str | None:
        """`teaching.py:25`: the basename, so a checkout elsewhere still matches."""
        if not self.source:
            return None
        path, _, line = self.source.rpartition(":")
        return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}"

    def label(self) -> str:
        op = self.op.replace(".default", "")
        who = f" `{self.name}`" if self.name and self.provenance == "user_op" else ""
        mod = f" [{self.module}]" if self.module else ""
        anchor = f" {self.anchor}" if self.anchor else ""
        return f"{op}{who}{anchor}{mod}"


@dataclass
class SideFacts:
    label: str
    kind: str                        # lowering | report | artefact | baseline
    model: str
    source: str
    target: str
    flow: str
    options: dict[str, Any]
    versions: dict[str, str]
    provenance: str                  # PROV_FULL | PROV_WEAK
    groups: list[OpGroup]
    memory: dict[str, Any] | None = None      # totals + what a board fit needs (see memory_facts)
    profile: dict[str, Any] | None = None     # unit, total, ops_total, islands[]
    numerics: dict[str, Any] | None = None    # inputs, output_sqnr_db, outputs[]
    accuracy: dict[str, Any] | None = None    # data, samples, top1/agreement per model, flips (extract.accuracy_facts)
    notes: list[str] = field(default_factory=list)

    def group(self, key: str) -> OpGroup | None:
        return next((g for g in self.groups if g.key == key), None)

    def fallback_groups(self) -> list[OpGroup]:
        return [g for g in self.groups if g.status == FALLBACK]

    def nodes_in_order(self) -> list[tuple[NodeFact, OpGroup]]:
        pairs = [(n, g) for g in self.groups for n in g.nodes]
        return sorted(pairs, key=lambda p: p[0].index)

    def to_dict(self) -> dict[str, Any]:
        """What `dataclasses.asdict` gives (fresh containers all the way down), without its deep copy of
        every leaf: a history record and a baseline take this on every lowering (12 of DS-CNN's 70 ms)."""
        return {f: (_groups_dicts(self.groups) if f == "groups" else _plain(getattr(self, f)))
                for f in _FIELDS[SideFacts]}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "SideFacts":
        groups = []
        for g in d.get("groups", []):
            g = dict(g)
            g["nodes"] = [NodeFact(**n) for n in g.get("nodes", [])]
            groups.append(OpGroup(**g))
        rest = {k: v for k, v in d.items() if k != "groups"}
        return SideFacts(**rest, groups=groups)


_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in (NodeFact, OpGroup, SideFacts)}


def _plain(v: Any) -> Any:
    """A copy of JSON-like data: new dicts, lists and tuples; leaves (str, numbers, None) shared."""
    t = type(v)
    if t is dict:
        return {k: _plain(x) for k, x in v.items()}
    if t is list or t is tuple:
        return t(_plain(x) for x in v)
    if is_dataclass(v) and not isinstance(v, type):
        return asdict(v)
    return v


def _groups_dicts(groups: list[OpGroup]) -> list[dict[str, Any]]:
    node_fields, group_fields = _FIELDS[NodeFact], _FIELDS[OpGroup]
    return [{f: ([{k: _plain(getattr(n, k)) for k in node_fields} for n in g.nodes] if f == "nodes"
                 else _plain(getattr(g, f))) for f in group_fields} for g in groups]
