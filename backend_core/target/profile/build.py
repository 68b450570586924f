"""ETDump events + the final snapshot -> a Profile: rows per executed op on final-graph nodes, grouped
per nn.Module, per kernel kind and per fallback island."""
from __future__ import annotations

from pathlib import Path

from backend_core.common.snapshot.model import KIND_CMSIS, KIND_DATA, KIND_FALLBACK, KIND_LABELS, KIND_QUANT, GraphSnapshot
from backend_core.target.profile.costs import bytes_moved, macs
from backend_core.target.profile.events import CONTROL_CALLS, EtdumpProfile, read_etdump
from backend_core.target.profile.islands import find_islands
from backend_core.target.profile.mapping import align
from backend_core.target.profile.model import Group, Island, OpCost, Profile
from backend_core.target.profile.units import Unit

KIND_GROUPS = ((KIND_CMSIS, "CMSIS-NN"), (KIND_FALLBACK, "portable compute"),
               (KIND_DATA, "data movement"), (KIND_QUANT, "quantize boundary"),
               ("runtime", "runtime move/free/jump instructions"))
NO_MODULE = "(graph boundary)"


def build_profile(events: EtdumpProfile, final: GraphSnapshot, unit: Unit, *, model: str = "",
                  target: str = "", inference: int = 0) -> Profile:
    """Profile of one inference (default the first; all inferences' totals are kept)."""
    if not events.inferences:
        raise ValueError("the ETDump holds no inference (no 'Execute' block): the runner stopped before it")
    inf = events.inferences[min(inference, len(events.inferences) - 1)]
    al = align(inf.instructions, final)
    total = unit.convert(inf.execute_ticks)
    nodes = final.node_map()
    ops: list[OpCost] = []
    counts = [unit.convert(ev.kernel_ticks if ev.kernel_ticks is not None else ev.ticks) or 0
              for ev in inf.instructions]
    denom = sum(counts)
    for i, (ev, nid, count) in enumerate(zip(inf.instructions, al.node_of, counts)):
        node = nodes.get(nid) if nid else None
        ops.append(OpCost(
            index=i, instruction_id=ev.instruction_id, node=nid,
            op=node.target if node else (ev.op_name or ev.kind),
            kind=node.kind if node else ("runtime" if ev.kind in CONTROL_CALLS else ""),
            module_path=_module(node, final) if node else "", count=count,
            call_count=unit.convert(ev.ticks), share=count / denom if denom else 0.0,
            macs=macs(node, final) if node else None, bytes_moved=bytes_moved(node, final) if node else None,
            debug_handle=node.debug_handle if node else None, span=_span(ev)))
    prof = Profile(model, target, unit, total, ops, no_instruction=al.skipped, unmapped=al.unmapped,
                   inference_totals=[unit.convert(x.execute_ticks) for x in events.inferences])
    prof.by_module = _groups(ops, lambda o: o.module_path or NO_MODULE, denom)
    labels = dict(KIND_GROUPS)
    prof.by_kind = _groups(ops, lambda o: labels.get(o.kind, KIND_LABELS.get(o.kind, o.kind or "unmapped")), denom)
    prof.islands = _islands(final, prof, denom)
    if events.all_zero:
        prof.notes.append("every timestamp in the ETDump is 0: the firmware has no et_pal_current_ticks "
                          "(ExecuTorch's weak default), so there is nothing to profile")
    if al.unmapped:
        prof.notes.append(f"{len(al.unmapped)} instruction(s) matched no node of the final graph: is the "
                          f"ETDump from a lowering of this model for this CPU?")
    return prof


def _span(ev) -> list[int]:
    """The raw-tick bounds of what `count` counts: the kernel wrapper's span, else the whole call."""
    if ev.kernel_ticks is not None and ev.kernel_start is not None:
        return [ev.kernel_start, ev.kernel_end]
    return [ev.start, ev.end]


def profile_from_files(etdump: str | Path, final: GraphSnapshot, unit: Unit, **kw) -> Profile:
    return build_profile(read_etdump(etdump), final, unit, **kw)


def _module(node, final: GraphSnapshot) -> str:
    """The node's nn.Module; a quantize/dequantize has none, so it takes the module of the node that
    shares its debug handle (the linear whose output it dequantizes), else of its producer."""
    if node.module_path:
        return node.module_path
    if node.debug_handle is not None:
        for other in final.nodes:
            if other.debug_handle == node.debug_handle and other.module_path:
                return other.module_path
    for i in node.inputs:
        src = final.node(i)
        if src is not None and src.fx_op == "call_function" and src.module_path:
            return src.module_path
    return ""


def _groups(ops: list[OpCost], key, denom: int) -> list[Group]:
    out: dict[str, Group] = {}
    for o in ops:
        g = out.setdefault(key(o), Group(key(o), [], 0, 0.0, None))
        if o.node:
            g.nodes.append(o.node)
        g.count += o.count
        if o.macs:
            g.macs = (g.macs or 0) + o.macs
    for g in out.values():
        g.share = g.count / denom if denom else 0.0
    return sorted(out.values(), key=lambda g: g.count, reverse=True)


def _islands(final: GraphSnapshot, prof: Profile, denom: int) -> list[Island]:
    cost: dict[str, int] = {}
    for o in prof.ops:
        if o.node:
            cost[o.node] = cost.get(o.node, 0) + o.count
    out = []
    for shape in find_islands(final):
        first = final.node(shape.fallbacks[0])
        name = f"{first.target.replace('.default', '')} island" if first else "island"
        count = sum(cost.get(n, 0) for n in shape.nodes)
        out.append(Island(name, shape.nodes, shape.fallbacks, count, count / denom if denom else 0.0,
                          shape.neighbours, sum(cost.get(n, 0) for n in shape.neighbours)))
    return out
