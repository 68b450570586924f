"""Bytes of planned memory alive at each instruction, from ExecuTorch's own plan.

A planned tensor lives from the first instruction that names it to the last one (program inputs from
the start, outputs to the end); at each instruction the live bytes are the union of the live tensors'
[offset, offset + nbytes) ranges per memory id, so tensors sharing storage (a view ExecuTorch planned
as an alias) are counted once. The peak can be below the arena (the planner may leave gaps) but never
above it. Instructions are tied to nodes of the final graph snapshot by op name in execution order
(the snapshot's call_function nodes minus memory.alloc/getitem, which emit no instruction)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.target.memory.plan import ProgramPlan

FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
_NO_INSTRUCTION = ("memory.alloc", "getitem", "operator.getitem", "output")


@dataclass
class Step:
    index: int                       # instruction index
    op: str                          # e.g. cortex_m::quantized_conv2d.out
    node: str | None                 # final-graph node id (None when it could not be matched)
    live_bytes: int                  # union of live planned bytes, all memory ids
    live_by_mem: dict[int, int]
    float_bytes: int                 # of which: fp32/fp16 tensors
    scratch_bytes: int = 0           # CMSIS-NN scratch buffers this op takes (memory.alloc)
    constant_bytes: int = 0          # constants first used by this op (flash)
    in_float_island: bool = False
    out: dict[str, Any] | None = None   # the op's output tensor: bytes, dtype, shape, mem_id, offset

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "op": self.op, "node": self.node, "live_bytes": self.live_bytes,
                "live_by_mem": {str(k): v for k, v in self.live_by_mem.items()},
                "float_bytes": self.float_bytes, "scratch_bytes": self.scratch_bytes,
                "constant_bytes": self.constant_bytes, "in_float_island": self.in_float_island,
                "out": self.out}


@dataclass
class FloatIsland:
    """Consecutive ops left in floating point between a dequantize and a quantize."""

    nodes: list[str]
    steps: list[int]
    float_bytes: int                 # most fp bytes alive at once inside the island
    extra_vs_int8: int               # those bytes minus what int8 tensors of the same shape would take
    at_peak: bool                    # the island holds the program's peak

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "steps": self.steps, "float_bytes": self.float_bytes,
                "extra_vs_int8": self.extra_vs_int8, "at_peak": self.at_peak}


@dataclass
class Timeline:
    steps: list[Step]
    peak_index: int
    peak_bytes: int
    largest: list[dict[str, Any]] = field(default_factory=list)   # biggest planned tensors
    islands: list[FloatIsland] = field(default_factory=list)

    @property
    def peak_step(self) -> Step | None:
        return self.steps[self.peak_index] if self.steps else None


def op_key(name: str) -> str:
    """`cortex_m::quantized_conv2d.out` and `cortex_m.quantized_conv2d.default` -> `cortex_m.quantized_conv2d`."""
    name = name.replace("::", ".")
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else name


def match_nodes(plan: ProgramPlan, final: Any | None) -> list[Any | None]:
    """The final-graph node of each instruction (greedy, in order; None when nothing matches)."""
    if final is None:
        return [None] * len(plan.instructions)
    nodes = [n for n in final.nodes if n.fx_op == "call_function" and n.target not in _NO_INSTRUCTION]
    out: list[Any | None] = []
    j = 0
    for ins in plan.instructions:
        key = op_key(ins.op)
        found = None
        for k in range(j, len(nodes)):
            if op_key(nodes[k].target) == key:
                found = k
                break
        if found is None:
            out.append(None)
        else:
            out.append(nodes[found])
            j = found + 1
    return out


def _is_scratch(t: Any, n_uses: int, is_out_arg: bool) -> bool:
    """A CMSIS-NN scratch buffer: a planned 1-D uint8 memory.alloc tensor only this op names."""
    return t.planned and t.dtype == "uint8" and len(t.shape) == 1 and n_uses == 1 and not is_out_arg


def _union(ranges: list[tuple[int, int]]) -> int:
    total = 0
    end = -1
    for s, e in sorted(ranges):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def lifetimes(plan: ProgramPlan) -> dict[int, tuple[int, int]]:
    """Value index -> (first, last) instruction index for every planned tensor that is used."""
    last = len(plan.instructions) - 1
    span: dict[int, list[int]] = {}
    for ins in plan.instructions:
        for a in ins.args:
            t = plan.tensors.get(a)
            if t is not None and t.planned:
                s = span.setdefault(a, [ins.index, ins.index])
                s[1] = ins.index
    for v in plan.inputs:
        if v in plan.tensors and plan.tensors[v].planned:
            span.setdefault(v, [0, 0])[0] = 0
    for v in plan.outputs:
        if v in plan.tensors and plan.tensors[v].planned:
            span.setdefault(v, [last, last])[1] = max(last, 0)
    return {v: (s[0], s[1]) for v, s in span.items()}


def build_timeline(plan: ProgramPlan, final: Any | None = None) -> Timeline:
    life = lifetimes(plan)
    matched = match_nodes(plan, final)
    uses: dict[int, int] = {}
    for ins in plan.instructions:
        for a in set(ins.args):
            uses[a] = uses.get(a, 0) + 1
    seen_const: set[int] = set()
    steps: list[Step] = []
    for ins, node in zip(plan.instructions, matched):
        live = [plan.tensors[v] for v, (s, e) in life.items() if s <= ins.index <= e]
        by_mem: dict[int, list[tuple[int, int]]] = {}
        fl: dict[int, list[tuple[int, int]]] = {}
        for t in live:
            r = (t.offset or 0, (t.offset or 0) + t.nbytes)
            by_mem.setdefault(t.mem_id or 0, []).append(r)
            if t.dtype in FLOAT_DTYPES:
                fl.setdefault(t.mem_id or 0, []).append(r)
        live_by_mem = {m: _union(r) for m, r in sorted(by_mem.items())}
        scratch = const = 0
        out_arg = ins.args[-1] if ins.args else None
        for a in dict.fromkeys(ins.args):
            pt = plan.tensors.get(a)
            if pt is None:
                continue
            if _is_scratch(pt, uses.get(a, 0), a == out_arg):
                scratch += pt.nbytes
            if pt.constant_buffer and pt.constant_buffer not in seen_const:
                seen_const.add(pt.constant_buffer)
                const += plan.constant_sizes.get(pt.constant_buffer, pt.nbytes)
        island = bool(node is not None and node.kind in ("portable_fallback", "data_movement")
                      and (node.dtype or "") in FLOAT_DTYPES)
        made = [plan.tensors[a] for a in dict.fromkeys(ins.args) if a in life and life[a][0] == ins.index
                and a not in plan.inputs and not _is_scratch(plan.tensors[a], uses.get(a, 0), a == out_arg)]
        ot = max(made, key=lambda t: t.nbytes) if made else (plan.tensors.get(out_arg) if out_arg is not None else None)
        out = None if ot is None else {"bytes": ot.nbytes, "dtype": ot.dtype, "shape": list(ot.shape),
                                       "mem_id": ot.mem_id, "offset": ot.offset}
        steps.append(Step(ins.index, ins.op, node.id if node is not None else None,
                          sum(live_by_mem.values()), live_by_mem, sum(_union(r) for r in fl.values()),
                          scratch, const, island, out))
    peak_index = max(range(len(steps)), key=lambda i: steps[i].live_bytes) if steps else 0
    peak = steps[peak_index].live_bytes if steps else 0
    return Timeline(steps, peak_index, peak, _largest(plan, life, steps), _islands(steps, peak_index))


def _largest(plan: ProgramPlan, life: dict[int, tuple[int, int]], steps: list[Step], n: int = 5) -> list[dict]:
    rows: list[dict[str, Any]] = []
    for v, (s, e) in life.items():
        t = plan.tensors[v]
        rows.append({"value": v, "bytes": t.nbytes, "dtype": t.dtype, "shape": list(t.shape),
                     "mem_id": t.mem_id, "offset": t.offset, "first": s, "last": e,
                     "node": steps[s].node if s < len(steps) else None})
    rows.sort(key=lambda r: -r["bytes"])
    return rows[:n]


def _islands(steps: list[Step], peak_index: int) -> list[FloatIsland]:
    out: list[FloatIsland] = []
    run: list[Step] = []
    for st in steps + [None]:
        if st is not None and st.in_float_island:
            run.append(st)
            continue
        if run:
            fb = max(s.float_bytes for s in run)
            out.append(FloatIsland([s.node for s in run if s.node], [s.index for s in run], fb,
                                   fb - fb // 4, any(s.index == peak_index for s in run)))
            run = []
    return out
