"""A `cmlens lower --json` report (plus, when there are, a profile and a numerics result) -> SideFacts.

The final graph's op nodes are grouped by the op the user wrote: the node of the "quantized" stage
each one traces back to (backend_core.stages.fallback.user_op, the same provenance the fallback reasons
use). One user op can become several final nodes (a linear and the dequantize after it); an
activation fused into the conv before it has no final node and is recorded as fused into that conv.
A report without a quantized stage (a bare .pte) has no such provenance: each op node is a group of
its own and the side is marked weak (matched by operator order, op and shape)."""
from __future__ import annotations

from typing import Any

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.stages.fallback.user_op import QUANTIZED_STAGE, UserOpResolver
from backend_core.common.provenance import Provenance
from backend_core.analyses.report.json_report import snapshots_from_report
from backend_core.common.snapshot.classify import is_quant_boundary
from backend_core.common.snapshot.model import (KIND_CMSIS, KIND_DATA, KIND_DELEGATE, KIND_FALLBACK, KIND_INPUT, KIND_PLUMBING,
                              KIND_WEIGHT, GraphSnapshot, NodeSnapshot)
from backend_core.orchestration.compare.facts import (BOUNDARY, DATA, DELEGATE, FALLBACK, FUSED, GONE, LOWERED, PROV_FULL,
                    PROV_WEAK, NodeFact, OpGroup, SideFacts, op_key)
from backend_core.orchestration.compare.qparams import qparams_of

_NOT_OPS = (KIND_PLUMBING, KIND_INPUT, KIND_WEIGHT)
# Activations ActivationFusionPass folds into the kernel before them (their clamp range).
_FUSABLE = ("relu", "relu_", "relu6", "hardtanh", "hardtanh_", "clamp", "clamp_")


def op_nodes(final: GraphSnapshot) -> list[NodeSnapshot]:
    """The final graph's nodes that run a kernel, in execution order."""
    return [n for n in final.nodes if n.fx_op == "call_function" and n.kind not in _NOT_OPS]


def _status(nodes: list[NodeSnapshot]) -> str:
    kinds = {n.kind for n in nodes}
    for kind, status in ((KIND_FALLBACK, FALLBACK), (KIND_CMSIS, LOWERED), (KIND_DELEGATE, DELEGATE),
                         (KIND_DATA, DATA)):
        if kind in kinds:
            return status
    return BOUNDARY if all(is_quant_boundary(n.target) for n in nodes) else FALLBACK


def _primary(nodes: list[NodeSnapshot]) -> NodeSnapshot:
    return next((n for n in nodes if n.kind in (KIND_CMSIS, KIND_FALLBACK, KIND_DELEGATE)), nodes[0])


def _source(n: NodeSnapshot) -> tuple[str | None, str]:
    return (n.source.full, n.source.code) if n.source else (None, "")


def _short(target: str) -> str:
    return target.split(".")[1] if target.count(".") >= 2 else target


def _producer(quantized: GraphSnapshot, name: str) -> str | None:
    """The user compute op whose output `name` consumes, through quantize/dequantize nodes."""
    into: dict[str, list[str]] = {}
    for e in quantized.edges:
        into.setdefault(e.dst, []).append(e.src)
    nmap = quantized.node_map()
    todo, seen = list(into.get(name, [])), set()
    while todo:
        cur = todo.pop(0)
        if cur in seen or cur not in nmap:
            continue
        seen.add(cur)
        n = nmap[cur]
        if n.fx_op == "call_function" and not is_quant_boundary(n.target):
            return cur
        if is_quant_boundary(n.target):
            todo.extend(into.get(cur, [])[:1])
    return None


def _keyed(groups: list[OpGroup]) -> None:
    """key = module|op|file:line or anchor|k, k counting equal triples in graph order."""
    seen: dict[tuple, int] = {}
    for g in groups:
        t = (g.module, g.op, g.file_line or g.anchor)
        k = seen.get(t, 0)
        seen[t] = k + 1
        g.key = f"{t[0]}|{t[1]}|{t[2]}|{k}"


def _anchor(final: GraphSnapshot, node: NodeSnapshot, user_of: dict[str, str],
            groups: dict[str, OpGroup]) -> OpGroup | None:
    """The user op a node of no user op (a quantize / dequantize, a pad a pass inserted) borders:
    through q/dq nodes to the op whose output it reads (`after`), or, from a graph input, to the op
    that reads it (`before`)."""
    into: dict[str, str] = {}
    outof: dict[str, list[str]] = {}
    for e in final.edges:
        if e.arg_index == 0:
            into.setdefault(e.dst, e.src)
        outof.setdefault(e.src, []).append(e.dst)
    nmap = final.node_map()
    for step, where in ((lambda x: [into[x]] if x in into else [], "after"), (lambda x: outof.get(x, []), "before")):
        cur, seen = [node.id], set()
        while cur:
            nxt = []
            for c in cur:
                for x in step(c):
                    if x in seen or x not in nmap:
                        continue
                    seen.add(x)
                    if x in user_of:
                        node_anchor = groups[user_of[x]]
                        return OpGroup(key=where, op="", name=node_anchor.name, module=node_anchor.module)
                    if is_quant_boundary(nmap[x].target) or nmap[x].kind == KIND_PLUMBING:
                        nxt.append(x)
            cur = nxt
    return None


def _groups_full(snaps: list[GraphSnapshot], ops: list[NodeSnapshot]) -> list[OpGroup]:
    quantized = next(s for s in snaps if s.stage == QUANTIZED_STAGE)
    resolver = UserOpResolver(snaps, Provenance(snaps))
    by_user: dict[str, list[NodeSnapshot]] = {}
    own: list[NodeSnapshot] = []
    qmap = quantized.node_map()
    for n in ops:
        if is_quant_boundary(n.target):     # only its own from_node chain: a requantise after a float
            q = next((qmap[o] for o in n.origin if o in qmap and qmap[o].fx_op == "call_function"
                      and not is_quant_boundary(qmap[o].target)), None)   # island belongs to no one op
        else:
            q = resolver.quantized_node(n)
        if q is None:
            own.append(n)
        else:
            by_user.setdefault(q.name, []).append(n)
    index = {n.id: i for i, n in enumerate(ops)}
    placed: list[tuple[float, OpGroup, list[NodeSnapshot]]] = []
    last = -1.0
    for q in (n for n in quantized.nodes if n.fx_op == "call_function" and not is_quant_boundary(n.target)):
        src, code = _source(q)
        g = OpGroup(key="", op=q.target, name=q.name, module=q.module_path, module_type=q.module_type,
                    source=src, code=code)
        members = by_user.get(q.name, [])
        kernels = [m for m in members if not is_quant_boundary(m.target)]
        if kernels:
            last = float(index[members[0].id])
            placed.append((last, g, members))
            continue
        prod = _producer(quantized, q.name) if _short(q.target) in _FUSABLE else None
        if prod and any(not is_quant_boundary(m.target) for m in by_user.get(prod, [])):
            # folded into the kernel before it; a dequantize of its output may remain (members)
            g.status, g.fused_into = FUSED, prod               # a name here, the host's key below
            placed.append((index[by_user[prod][-1].id] + 0.5, g, members))
        elif members:
            last = float(index[members[0].id])
            placed.append((last, g, members))
        else:
            g.status = GONE
            last += 0.01
            placed.append((last, g, members))
    user_of = {n.id: name for name, members in by_user.items() for n in members}
    by_name = {g.name: g for _, g, _ in placed if g.provenance == "user_op"}
    for n in own:
        src, code = _source(n)
        g = OpGroup(key="", op=op_key(n.target), name=n.name, module=n.module_path, module_type=n.module_type,
                    source=src, code=code, provenance="node")      # no overload: .out in a program, .default here
        a = _anchor(snaps[-1], n, user_of, by_name)
        if a is not None:
            g.anchor, g.module = f"{a.key} `{a.name}`", g.module or a.module
        placed.append((float(index[n.id]), g, [n]))
    placed.sort(key=lambda t: t[0])
    out = []
    for _, g, members in placed:
        status = g.status
        _fill(g, members, ops)
        if status == FUSED:
            g.status = FUSED
        out.append(g)
    _keyed(out)
    keys = {g.name: g.key for g in out if g.provenance == "user_op"}
    for g in out:
        if g.fused_into:
            g.fused_into = keys.get(g.fused_into)
    return out


def _fill(g: OpGroup, members: list[NodeSnapshot], ops: list[NodeSnapshot]) -> None:
    index = {n.id: i for i, n in enumerate(ops)}
    g.nodes = [NodeFact(n.id, n.target, n.kind, index[n.id], list(n.shape) if n.shape is not None else None,
                        n.dtype) for n in members]
    if not members:
        return
    g.status = _status(members)
    fb = next((n.fallback for n in members if n.kind == KIND_FALLBACK and n.fallback is not None), None)
    if fb is not None:
        g.category, g.reason, g.suggestion = fb.category, fb.message, fb.suggestion
        if not g.source and fb.user_op and fb.user_op.source:
            g.source = fb.user_op.source
    g.qparams = qparams_of(_primary(members))


def _groups_weak(ops: list[NodeSnapshot]) -> list[OpGroup]:
    out = []
    for i, n in enumerate(ops):
        src, code = _source(n)
        g = OpGroup(key=f"#{i}|{n.target}", op=n.target, name=n.name, module=n.module_path,
                    module_type=n.module_type, source=src, code=code, provenance="none")
        _fill(g, [n], ops)
        out.append(g)
    return out


# Per-op lists of the memory section: the groups carry their share; a baseline does not need them.
_BULKY = ("timeline", "largest_tensors", "constants_by_node", "scratch", "float_islands")


def memory_facts(mem: dict[str, Any] | None, schedule: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The memory section without its per-op lists: the totals, and everything
    `backend_core.target.memory.fit_findings` reads to judge a board (`--fits`). With the report's schedule
    section (`--schedule`), `schedule` holds the scheduled program's totals: what ships, and what
    `gate --max-arena` gates."""
    if not mem:
        return None
    out = {k: v for k, v in mem.items() if k not in _BULKY}
    out["method_allocator_used"] = (mem.get("method_allocator") or {}).get("used")
    if schedule and schedule.get("chosen"):
        c = schedule["chosen"]
        out["schedule"] = {"spec": schedule.get("spec"), "split": c["split"], "grid": c["grid"],
                           "input_dtype": c["input_dtype"], "total_ram_bytes": c["total_ram_bytes"],
                           "arena_bytes": c["measured"]["arena_bytes"],
                           "unscheduled_total_ram_bytes": schedule["plain"]["total_ram_bytes"]}
    return out


def _attach_memory(groups: list[OpGroup], mem: dict[str, Any] | None) -> None:
    if not mem or not mem.get("timeline"):
        return
    by_node = {s["node"]: s for s in mem["timeline"] if s.get("node")}
    for g in groups:
        steps = [by_node[n.id] for n in g.nodes if n.id in by_node]
        if steps:
            g.arena_bytes = max(s["live_bytes"] for s in steps)
            g.scratch_bytes = sum(s.get("scratch_bytes") or 0 for s in steps)
            out = steps[-1].get("out") or {}
            g.out_bytes = out.get("bytes")


def profile_facts(profile: dict[str, Any] | None, groups: list[OpGroup]) -> dict[str, Any] | None:
    """Instructions (and the cycle estimate's ms) per group (sum of its nodes' kernels), the totals and the
    islands."""
    if not profile:
        return None
    if profile.get("estimate") and any("ms" not in o for o in profile.get("ops", [])):
        from backend_core.target.profile.model import Profile

        profile = Profile.from_dict(profile).to_dict()     # a run's JSON written before ms were on its rows
    counts: dict[str, int] = {}
    ms: dict[str, float] = {}
    for o in profile.get("ops", []):
        if o.get("node"):
            counts[o["node"]] = counts.get(o["node"], 0) + int(o.get("count") or 0)
            if o.get("ms") is not None:
                ms[o["node"]] = ms.get(o["node"], 0.0) + float(o["ms"])
    node_group = {n.id: g for g in groups for n in g.nodes}
    for g in groups:
        mine = [counts[n.id] for n in g.nodes if n.id in counts]
        if mine:
            g.instructions = sum(mine)
        mine_ms = [ms[n.id] for n in g.nodes if n.id in ms]
        if mine_ms:
            g.ms = sum(mine_ms)
    islands = []
    for isl in profile.get("islands", []):
        keys = sorted({node_group[f].key for f in isl.get("fallbacks", []) if f in node_group})
        islands.append({"key": "+".join(keys) or isl.get("name", ""), "name": isl.get("name", ""),
                        "count": isl.get("count"), "ms": isl.get("ms"), "fallbacks": keys})
    unit = profile.get("unit_info", {}).get("label") or profile.get("unit", "")
    return {"unit": unit, "total": profile.get("total"),
            "ops_total": profile.get("ops_total", sum(counts.values())), "islands": islands,
            "mapped_nodes": sum(1 for n in counts if n in node_group), "ops": len(profile.get("ops", [])),
            **estimate_facts(profile.get("estimate"))}


def estimate_facts(e: dict[str, Any] | None) -> dict[str, Any]:
    """The cycle estimate a gate and a history read: ms, and the board, clock and error it holds for."""
    if not e:
        return {"ms": None}
    return {"ms": e.get("ms"), "estimate": {k: e.get(k) for k in ("core", "board", "clock_mhz", "flash_wait_states",
                                                                  "error_pct", "low_confidence", "headline")}}


def numerics_facts(numerics: dict[str, Any] | None, groups: list[OpGroup]) -> dict[str, Any] | None:
    """SQNR of the lowered program against the float model, per group (its last measured node) and at
    the outputs: comparable across sides (error against each side's own fake-quant model is not)."""
    if not numerics:
        return None
    layers = {layer["node_id"]: layer for layer in numerics.get("layers", [])}
    for g in groups:
        vals = [layers[n.id]["vs_float"]["sqnr_db"] for n in g.nodes
                if n.id in layers and layers[n.id].get("vs_float")]
        if vals:
            g.sqnr_db = vals[-1]
    outs = [{"index": o.get("index"), "sqnr_db": (o.get("vs_float") or {}).get("sqnr_db"),
             "vs_fake_quant_db": (o.get("vs_fake_quant") or {}).get("sqnr_db")} for o in numerics.get("outputs", [])]
    vals = [o["sqnr_db"] for o in outs if o["sqnr_db"] is not None]
    return {"inputs": numerics.get("inputs", ""), "outputs": outs, "output_sqnr_db": min(vals) if vals else None,
            "mapped_layers": sum(1 for g in groups for n in g.nodes if n.id in layers)}


def accuracy_facts(ev: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a compare and a gate need of an evaluate step's section (`cmlens evaluate --json`'s `evaluate`):
    the data and sample count (accuracies on other samples are not comparable), top-1 and agreement with
    float per model, the flips and the layers they start at. None without a classification's top-1."""
    if not ev or not isinstance(ev.get("models"), dict):
        return None
    models = {k: {m: v.get(m) for m in ("top1", "top5", "agreement", "agreement_with_fake_quant") if m in v}
              for k, v in ev["models"].items() if isinstance(v, dict)}
    if (models.get("lowered") or {}).get("top1") is None:
        return None
    flips = ev.get("flips") or {}
    first = (ev.get("outputs") or [{}])[0]
    return {"data": ev.get("data", ""), "samples": ev.get("samples"), "task": ev.get("task"), "models": models,
            "flips": len(ev.get("flipped", [])),
            # two lowerings can agree on every prediction and still differ in value (a confident classifier):
            # the lowered output's SQNR against float says by how much
            "output_sqnr_db": (first.get("lowered_vs_float") or {}).get("sqnr_db"),
            "by_layer": [{"layer": g.get("layer"), "label": g.get("label", ""), "flips": g.get("flips")}
                         for g in flips.get("by_layer", [])[:5]]}


def facts_from_report(report: dict[str, Any], *, label: str, kind: str, profile: dict[str, Any] | None = None,
                      numerics: dict[str, Any] | None = None, evaluate: dict[str, Any] | None = None,
                      snapshots: list[Any] | None = None) -> SideFacts:
    """BadInputError when the report has no finished final graph to compare. `snapshots`: the live
    lowering's GraphSnapshots the report was built from (else rebuilt from its stages' nodes)."""
    if report.get("status") != "done":
        err = report.get("error") or {}
        raise CmlensError(f"{label}: the lowering did not finish ({report.get('status')}"
                            f"{', at ' + err['stage'] if err.get('stage') else ''}): nothing to compare.",
                            "Compare lowerings that finish; `cmlens lower` on it shows the failing stage.")
    if not report.get("stages") or "nodes" not in report["stages"][-1]:
        raise BadInputError(f"{label}: the report holds no graphs.", "Write it with `cmlens lower MODEL --json F`.")
    snaps = snapshots if snapshots is not None else snapshots_from_report(report)
    final = snaps[-1]
    ops = op_nodes(final)
    full = any(s.stage == QUANTIZED_STAGE for s in snaps)
    groups = _groups_full(snaps, ops) if full else _groups_weak(ops)
    notes = []
    if full and ops and all(g.provenance == "node" for g in groups if g.nodes):
        full = False
        notes.append("no final node traces back to a quantisation-time op")
    _attach_memory(groups, report.get("memory"))
    prof = profile_facts(profile if profile is not None else report.get("profile"), groups)
    num = numerics_facts(numerics if numerics is not None else report.get("numerics"), groups)
    opts = dict(report.get("options") or {})
    art = report.get("artefact")
    if art:
        notes.extend(art.get("notes", [])[:3])
    return SideFacts(label=label, kind=kind, model=report.get("model", ""), source=report.get("source", ""),
                     target=report.get("target", ""), flow=report.get("flow", ""), options=opts,
                     versions=dict(report.get("versions") or {}), provenance=PROV_FULL if full else PROV_WEAK,
                     groups=groups, memory=memory_facts(report.get("memory"), report.get("schedule")), profile=prof,
                     numerics=num,
                     accuracy=accuracy_facts(evaluate if evaluate is not None else report.get("evaluate")),
                     notes=notes)
