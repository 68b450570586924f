"""A per-op profile as plain, JSON-serialisable data: what the CLI prints, the JSON carries and the GUI
draws. Built by build.py; every count is in `unit` (see units.py: on QEMU, instructions executed under
-icount, not cycles)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend_core.target.profile.milliseconds import estimate_summary, island_ms, op_ms
from backend_core.target.profile.units import Unit


@dataclass
class OpCost:
    """One executed instruction (one kernel call) on its final-graph node."""

    index: int                      # execution order
    instruction_id: int
    node: str | None                # final node id (None: not mapped)
    op: str                         # the node's target, e.g. cortex_m.quantized_conv2d.default
    kind: str                       # node kind (cmsis_nn, portable_fallback, data_movement, quant_boundary)
    module_path: str
    count: int                      # the kernel wrapper's span (native_call_*: kernel + unboxing), in unit
    call_count: int | None          # the whole OPERATOR_CALL span: count + recording count's event + context
    share: float                    # of the inference's kernels (ops_total), see Profile
    macs: int | None
    bytes_moved: int | None
    debug_handle: int | None = None
    span: list[int] | None = None   # [start, end] raw ticks of the counted span (the class counts' bounds)
    classes: dict[str, int] | None = None   # instructions by class (backend_core.target.timing), QEMU only

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
    """Counts per op are the kernel wrappers' spans (native_call_*). The ETDump's own event recording
    costs ~2,000 instructions per event on these boards (measured: OPERATOR_CALL minus the
    native_call inside it) and two events are recorded per instruction, so Method::execute (`total`)
    carries 2 x instructions x that; on a board without a profiler it is not there. Shares are
    therefore of `ops_total` (the kernels), which is what an unprofiled inference spends bar the
    dispatch loop; `total` is still what ran, deterministic, and what --max-instructions checks."""

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
    estimate: dict[str, Any] | None = None      # the cycle estimate (backend_core.target.timing.estimate)

    @property
    def ops_total(self) -> int:
        return sum(o.count for o in self.ops)

    @property
    def overhead(self) -> int | None:
        """Method::execute minus the kernels: the dispatch loop and the ETDump's event recording."""
        return None if self.total is None else self.total - self.ops_total

    @property
    def recording_per_event(self) -> int | None:
        """Median of OPERATOR_CALL minus the native_call inside it: recording one event (plus the
        kernel context's set-up), the profiler's own cost per event."""
        diffs = sorted(o.call_count - o.count for o in self.ops if o.call_count is not None)
        return diffs[len(diffs) // 2] if diffs else None

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
        d["recording_per_event"] = self.recording_per_event
        ms = op_ms(self)                    # the cycle estimate's milliseconds ([] without one)
        for k, (o, row) in enumerate(zip(self.ops, d["ops"])):
            row["per_mac"] = o.per_mac
            row["ms"] = ms[k] if ms else None
        for i, row in zip(self.islands, d["islands"]):
            row["ratio"] = i.ratio
            row["ms"] = island_ms(self, i, ms)
        d["estimate"] = estimate_summary(self.estimate)
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
                       list(d.get("inference_totals", [])), list(d.get("notes", [])), d.get("estimate"))
