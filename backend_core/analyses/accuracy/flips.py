"""Why a prediction flipped: for each sample whose top-1 differs between float and the lowered program,
its per-layer error (backend_core.analyses.numerics' capture, run on that one sample) against the model's usual
per-layer error (the median over reference samples that did not flip). The first layer, in graph order,
where the sample's SQNR (lowered vs float, cumulative) falls more than `threshold_db` below the median is
where that sample left the usual path: the layer that flipped it. Flips are then grouped by that layer:
"9 of 14 flips start at dw3 (depthwise conv, model.py:41): SQNR 11 dB on those samples vs 27 dB median".

A flip whose every layer stays within the threshold is a near tie in float (its margin says so): the
quantisation noise was ordinary, the decision was not robust."""
from __future__ import annotations

import statistics
from typing import Any, Callable

from backend_core.analyses.numerics.analyze import Sampling, analyze
from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.analyses.accuracy.programs import EvalPrograms, one_thread

OP_WORDS = {"quantized_conv2d": "conv", "quantized_depthwise_conv2d": "depthwise conv", "quantized_linear": "linear",
            "quantized_add": "add", "quantized_mul": "mul", "quantized_avg_pool2d": "avg pool",
            "quantized_max_pool2d": "max pool", "quantize_per_tensor": "input quantize",
            "quantized_activation": "activation (lookup table)", "softmax": "softmax", "transpose": "transpose",
            "pad": "pad", "quantized_transpose_conv2d": "transposed conv"}
NO_LAYER = "(no layer departs)"


def layer_info(node: NodeSnapshot) -> dict[str, Any]:
    """The op the user wrote behind a final-graph node: module path, a word for the kernel, file:line."""
    base = op_base_name(node.target).replace("cortex_m.", "")
    op = OP_WORDS.get(base, base)
    if node.kind == "portable_fallback":
        op += " (portable fallback)"
    src = node.source
    where = src.short if src else ""
    name = node.module_path or node.id
    label = f"{name} ({op}{', ' + where if where else ''})"
    return {"node": node.id, "target": node.target, "op": op, "module": node.module_path, "label": label,
            "source": src.full if src else None, "code": src.code if src else ""}


def sqnr_profile(programs: EvalPrograms, sample: tuple) -> dict[str, float]:
    """Per layer of the final graph, SQNR (dB) of the lowered program against float on this sample."""
    assert programs.final_snapshot is not None  # a lowering's programs: its final graph
    with one_thread():
        res = analyze(programs.stages, programs.final_snapshot, [sample], sampling=Sampling(sample_size=1, local_samples=0))
    return {lay.node_id: lay.vs_float.sqnr_db for lay in res.layers if lay.vs_float is not None}


def explain_flips(programs: EvalPrograms, names: list[str], samples: list[tuple], flipped: list[int],
                  margins: list[float], *, preds: dict[str, list[int]], labels: list[Any] | None,
                  threshold_db: float = 3.0, reference_samples: int = 16, max_traced: int = 64,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The flips section: each flipped sample with its first departing layer, and the flips by layer.
    Each traced sample costs one numerics run (~0.1-0.2 s for a small model): at most `max_traced`."""
    assert programs.final_snapshot is not None  # a lowering's programs: its final graph
    snap: GraphSnapshot = programs.final_snapshot
    flipped_set = set(flipped)
    pool = [i for i in range(len(samples)) if i not in flipped_set]
    step = max(1, len(pool) // reference_samples) if pool else 1
    refs = pool[::step][:reference_samples]
    profiles: list[dict[str, float]] = []
    for k, i in enumerate(refs):
        if progress:
            progress(f"usual per-layer error: reference sample {k + 1}/{len(refs)}")
        profiles.append(sqnr_profile(programs, samples[i]))
    order = [n.id for n in snap.nodes]
    layers = [nid for nid in order if any(nid in p for p in profiles)]
    median = {nid: statistics.median([p[nid] for p in profiles if nid in p]) for nid in layers}
    nodes = snap.node_map()
    rows: list[dict[str, Any]] = []
    traced = flipped[:max_traced]
    for k, i in enumerate(traced):
        if progress:
            progress(f"flipped sample {k + 1}/{len(traced)}: per-layer error")
        prof = sqnr_profile(programs, samples[i])
        first = next((nid for nid in layers if nid in prof and prof[nid] < median[nid] - threshold_db), None)
        worst = min(layers, key=lambda nid: prof.get(nid, 1e9) - median[nid]) if layers else None
        rows.append({"sample": names[i], "index": i, "label": labels[i] if labels and isinstance(labels[i], int) else None,
                     "float": preds["float"][i], "fake_quant": preds["fake_quant"][i], "lowered": preds["lowered"][i],
                     "float_margin": round(margins[i], 4), "layer": first,
                     "layer_sqnr_db": round(prof[first], 2) if first else None,
                     "median_sqnr_db": round(median[first], 2) if first else None,
                     "largest_drop_layer": worst,
                     "largest_drop_db": round(median[worst] - prof.get(worst, median[worst]), 2) if worst else None,
                     "profile_db": {nid: round(v, 2) for nid, v in prof.items()}})
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["layer"] or NO_LAYER, []).append(r)
    by_layer = []
    for key, rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0] == NO_LAYER, kv[0])):
        entry: dict[str, Any] = {"layer": None if key == NO_LAYER else key, "flips": len(rs),
                                 "samples": [r["sample"] for r in rs]}
        if key == NO_LAYER:
            entry["label"] = f"no layer departs from its usual error by more than {threshold_db:g} dB"
            entry["median_float_margin"] = round(statistics.median(r["float_margin"] for r in rs), 4)
        else:
            entry.update(layer_info(nodes[key]))
            entry["sqnr_db"] = round(statistics.median(r["profile_db"][key] for r in rs), 2)
            entry["median_sqnr_db"] = round(median[key], 2)
        by_layer.append(entry)
    return {"threshold_db": threshold_db, "reference_samples": [names[i] for i in refs], "count": len(rows),
            "flipped": len(flipped),
            "median_profile_db": {nid: round(median[nid], 2) for nid in layers},
            "layers": [layer_info(nodes[nid]) for nid in layers], "samples": rows, "by_layer": by_layer}


def flip_lines(flips: dict[str, Any]) -> list[str]:
    """"9 of 14 flips start at dw3 (depthwise conv, model.py:41): SQNR 11 dB on those samples vs 27 dB median"."""
    n = flips.get("count", 0)
    out = []
    if flips.get("flipped", n) > n:
        out.append(f"(the first {n} of {flips['flipped']} flips traced)")
    for g in flips.get("by_layer", []):
        if g["layer"] is None:
            out.append(f"{g['flips']} of {n} flips: {g['label']} (near ties in float: median top-1 margin "
                       f"{g['median_float_margin']:.3g})")
        else:
            out.append(f"{g['flips']} of {n} flips start at {g['label']}: SQNR {g['sqnr_db']:.1f} dB on those "
                       f"samples vs {g['median_sqnr_db']:.1f} dB median")
    return out
