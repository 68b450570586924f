"""An ETRecord (executorch.devtools.generate_etrecord) as stages: the exported program, the extra
graphs it recorded (e.g. the PT2E-quantized module), the edge program, and, when its program is at
hand, the `program` stage linked to the edge graph through the ETRecord's debug-handle map.

An ETRecord of ExecuTorch 1.5.1 does not embed the .pte bytes (its zip holds the graphs, the
debug-handle / delegate maps and representative inputs), so the program is taken from a file the
caller names or from `<stem>.pte` / `<stem>.bpte` next to the record.

Fallback reasons come from the recorded graphs with backend_core.stages.fallback (q/dq around the op in
the quantized graph, provenance through debug handles); where that evidence is not enough, from
what the graph alone supports (reasons.py). Quantizer verdicts are not recorded, so the model
source still gives the fullest explanation."""
from __future__ import annotations

import traceback
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.stages.fallback import FallbackContext, explain_fallbacks
from backend_core.common.snapshot.capture import capture
from backend_core.common.snapshot.model import KIND_FALLBACK, GraphSnapshot, NodeSnapshot
from backend_core.lowering.artefacts.reasons import explain_program, substitution_bases

MORE_FROM_RECORD = "the model source (cmlens lower model.py: the quantizer's verdicts)"


def parse(path: Path) -> Any:
    from backend_core.lowering.artefacts.schemas import register_libraries

    register_libraries()     # the record's graphs hold cortex_m ops: "fake operators" without this
    from executorch.devtools.etrecord import parse_etrecord

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse_etrecord(str(path))
    except Exception as e:  # a record torch cannot load is bad input
        text = f"{type(e).__name__}: {str(e)[:300]}"
        version = "version" in text.lower() or "schema" in text.lower()
        raise BadInputError(
            f"ExecuTorch could not load the ETRecord {path.name}: {text}",
            ("It was probably written by another torch/ExecuTorch version: generate it again with the "
             "installed versions." if version else
             "The record is damaged or incomplete: generate it again with executorch.devtools.generate_etrecord."),
            detail=traceback.format_exc()) from e


def _method(program: Any, method: str = "forward") -> Any:
    if isinstance(program, dict):
        return program.get(method) or next(iter(program.values()), None)
    return program


def _has_cortex_m(ep: Any) -> bool:
    return any("cortex_m" in str(n.target) for n in ep.graph.nodes if n.op == "call_function")


def record_stages(record: Any) -> tuple[list[GraphSnapshot], list[str]]:
    """Snapshots of every graph in the record, in pipeline order, and notes about what is missing."""
    notes: list[str] = []
    graphs: list[tuple[str, str, Any]] = []
    if record.exported_program is not None:
        graphs.append(("exported program", "export", record.exported_program))
    for key, ep in (record.graph_map or {}).items():
        graphs.append((key.removesuffix("/forward"), "quantize" if "quant" in key.lower() else "pass", ep))
    edge = _method(record.edge_dialect_program)
    if edge is not None:
        graphs.append(("edge program", "final" if _has_cortex_m(edge) else "edge", edge))
    else:
        notes.append("the ETRecord has no edge program: fallbacks cannot be shown")
    snaps: list[GraphSnapshot] = []
    for name, kind, ep in graphs:
        snaps.append(capture(ep, name, len(snaps), kind, final=(kind == "final"), runnable_on_host=True))
    return snaps, notes


def explain_record(snaps: list[GraphSnapshot]) -> list[GraphSnapshot]:
    """Fallback reasons on the record's final (edge) graph."""
    if not snaps or snaps[-1].kind != "final":
        return snaps
    subs = substitution_bases()
    from backend_core.lowering.result import supported_targets

    ctx = FallbackContext(list(snaps), {}, target="", flow="legacy", supported_targets=supported_targets())
    final = explain_fallbacks(ctx)
    # Without the quantizer's verdicts some rules cannot decide: use the graph-only reasons there.
    unknown = {n.id for n in final.nodes
               if n.kind == KIND_FALLBACK and n.fallback is not None and n.fallback.category == "unknown"}
    if unknown:
        cleared = replace(final, nodes=tuple(replace(n, fallback=None) if n.id in unknown else n for n in final.nodes))
        graph_only = {n.id: n.fallback for n in explain_program(cleared, subs, more=MORE_FROM_RECORD).nodes
                      if n.id in unknown}
        final = replace(final, nodes=tuple(replace(n, fallback=_merge(graph_only[n.id], n.fallback))
                                           if n.id in graph_only else n for n in final.nodes))
    return snaps[:-1] + [final]


def _merge(graph_only: Any, recorded: Any) -> Any:
    evidence = tuple(dict.fromkeys(recorded.evidence + graph_only.evidence))
    return replace(graph_only, evidence=evidence, stage=recorded.stage or graph_only.stage)


def debug_handles(record: Any, method: str = "forward") -> dict[int, tuple[int, ...]]:
    """instruction index -> debug handles of the edge nodes it came from (the record's map)."""
    raw = (record._debug_handle_map or {}).get(method) or {}
    out: dict[int, tuple[int, ...]] = {}
    for k, v in raw.items():
        handles = tuple(int(x) for x in (v if isinstance(v, (list, tuple)) else [v]))
        out[int(k)] = handles
    return out


def link_program(program: GraphSnapshot, instruction_nodes: list[str], handles: dict[int, tuple[int, ...]],
                 final: GraphSnapshot | None) -> GraphSnapshot:
    """Give the program's nodes the debug handles, module paths, source lines and fallback reasons of
    the edge nodes they were emitted from, so provenance and the views cross between the two."""
    by_handle: dict[int, list[NodeSnapshot]] = {}
    if final is not None:
        for n in final.nodes:
            if n.debug_handle is not None and n.fx_op == "call_function":
                by_handle.setdefault(n.debug_handle, []).append(n)
    node_handle = {nid: handles[i][0] for i, nid in enumerate(instruction_nodes) if nid and handles.get(i)}
    out = []
    for n in program.nodes:
        h = node_handle.get(n.id)
        if h is None:
            out.append(n)
            continue
        twins = by_handle.get(h, [])
        twin = next((t for t in twins if _same_op(t.target, n.target)), twins[0] if twins else None)
        if twin is None:
            out.append(replace(n, debug_handle=h))
            continue
        fb = n.fallback
        if n.kind == KIND_FALLBACK and twin.fallback is not None:
            fb = replace(twin.fallback, evidence=twin.fallback.evidence + (f"program node {n.id} runs it as {n.target}",))
        out.append(replace(n, debug_handle=h, module_path=twin.module_path, module_type=twin.module_type,
                           source=twin.source, origin=(twin.id,) + twin.origin[:4], fallback=fb))
    return replace(program, nodes=tuple(out))


def _same_op(a: str, b: str) -> bool:
    from backend_core.common.snapshot.classify import op_base_name

    return op_base_name(a) == op_base_name(b)

