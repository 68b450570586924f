"""A per-op profile as plain, JSON-serialisable data: what the CLI prints, the JSON carries and the GUI
draws. Built by build.py; every count is in `unit` (see units.py: on QEMU, instructions executed under
-icount, not cycles)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .units import Unit


@dataclass
class OpCost:
    """One executed instruction (one kernel call) on its final-graph node."""

    index: int                      # execution order
    instruction_id: int
    node: str | None                # final node id (None: not mapped)
    op: str                         # the node's target, e.g. cortex_m.quantized_conv2d.default
    kind: str                       # node kind (cmsis_nn, portable_fallback, data_movement, quant_boundary)
    module_path: str
    count: int                      # whole OPERATOR_CALL span, in unit
    kernel_count: int | None        # the kernel wrapper's span inside it
    share: float                    # of the inference (Method::execute)
    macs: int | None
    bytes_moved: int | None
    debug_handle: int | None = None

    @property
    def per_mac(self) -> float | None:
        return None if not self.macs else self.count / self.macs


@dataclass
class Group:
    """A sum of op rows: per nn.Module, per kernel kind."""

    name: str
    nodes: list[str]
    count: int
    share: float
    macs: int | None = None


@dataclass
class Island:
    """A fallback island (islands.py) with its cost and the cost of the CMSIS-NN kernels around it."""

    name: str                       # "aten.native_layer_norm island"
    nodes: list[str]
    fallbacks: list[str]
    count: int
    share: float
    neighbours: list[str] = field(default_factory=list)
    neighbours_count: int = 0

    @property
    def ratio(self) -> float | None:
        """Island cost / cost of the CMSIS-NN kernels around it."""
        return None if not self.neighbours_count else self.count / self.neighbours_count


@dataclass
class Profile:
    model: str
    target: str
    unit: Unit
    total: int | None               # Method::execute of the profiled inference, in unit
    ops: list[OpCost]
    islands: list[Island] = field(default_factory=list)
    by_module: list[Group] = field(default_factory=list)
    by_kind: list[Group] = field(default_factory=list)
    no_instruction: list[str] = field(default_factory=list)     # final op nodes that ran no instruction
    unmapped: list[int] = field(default_factory=list)           # instruction positions without a node
    inference_totals: list[int | None] = field(default_factory=list)   # every inference, same unit
    notes: list[str] = field(default_factory=list)

    @property
    def ops_total(self) -> int:
        return sum(o.count for o in self.ops)

    @property
    def overhead(self) -> int | None:
        """Method::execute minus its kernel calls: the runner's dispatch loop and event recording."""
        return None if self.total is None else self.total - self.ops_total

    @property
    def deterministic(self) -> bool | None:
        """All inferences of the run cost the same (None with one inference)."""
        vals = [t for t in self.inference_totals if t is not None]
        return None if len(vals) < 2 else len(set(vals)) == 1

    def top(self, n: int = 10) -> list[OpCost]:
        return sorted(self.ops, key=lambda o: o.count, reverse=True)[:n]

    def node_cost(self) -> dict[str, OpCost]:
        """Node id -> its row (what the graph's cost overlay and the inspector read)."""
        return {o.node: o for o in self.ops if o.node is not None}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["unit"] = self.unit.name
        d["unit_info"] = self.unit.to_dict()
        d["ops_total"] = self.ops_total
        d["overhead"] = self.overhead
        for o, row in zip(self.ops, d["ops"]):
            row["per_mac"] = o.per_mac
        for i, row in zip(self.islands, d["islands"]):
            row["ratio"] = i.ratio
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Profile":
        def pick(cls, row):
            return cls(**{k: v for k, v in row.items() if k in cls.__dataclass_fields__})
        unit = Unit.from_dict(d.get("unit_info") or {"name": d.get("unit", "ticks"), "label": d.get("unit", "")})
        return Profile(d.get("model", ""), d.get("target", ""), unit, d.get("total"),
                       [pick(OpCost, r) for r in d.get("ops", [])],
                       [pick(Island, r) for r in d.get("islands", [])],
                       [pick(Group, r) for r in d.get("by_module", [])],
                       [pick(Group, r) for r in d.get("by_kind", [])],
                       list(d.get("no_instruction", [])), list(d.get("unmapped", [])),
                       list(d.get("inference_totals", [])), list(d.get("notes", [])))
