"""PT2E quantization with CortexMQuantizer, keeping the QuantizerReporter's verdicts as data."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from backend_core.stages.pipeline.calibration_memo import CalibrationMemo, observer_keys

Q_ANNOTATION_KEY = "quantization_annotation"


@dataclass
class QuantizerDecisions:
    """What the quantizer decided per node: accepted patterns, rejections with the checker's
    words, and the nodes nobody annotated. Keyed by the node names of the exported graph."""

    accepted: dict[str, str] = field(default_factory=dict)        # node -> quantizer label
    rejected: dict[str, list[str]] = field(default_factory=dict)  # node -> reasons
    not_annotated: list[str] = field(default_factory=list)
    report_text: str = ""
    quantizers: list[dict[str, Any]] = field(default_factory=list)
    # node -> the limits its rejected pattern hit, in words (backend_core.stages.fallback.limits)
    limits: dict[str, list[str]] = field(default_factory=dict)
    layout_limited: list[str] = field(default_factory=list)   # nodes rejected for NCHW layout
    # node -> why --keep-going took it out of quantisation (the pass failure it caused)
    quarantined: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "rejected": self.rejected,
                "not_annotated": self.not_annotated, "report_text": self.report_text,
                "quantizers": self.quantizers, "limits": self.limits,
                "layout_limited": self.layout_limited, "quarantined": self.quarantined}


def _record_limits(v: QuantizerDecisions, nodes: dict[str, Any], names: list[str], reason: str,
                   qconfig: str, explicit: bool) -> None:
    """Which limit a rejected pattern hit, read from the live nodes (see fallback.limits)."""
    from backend_core.stages.fallback import limits as L

    pattern = [nodes[n] for n in names if n in nodes]
    if len(pattern) != len(names) or not pattern:
        return
    checker = L.checker_for(pattern, explicit)
    if reason == L.REJECT_PATTERN:
        found = L.pattern_limits(pattern, checker)
    elif reason == L.REJECT_QCONFIG:
        found = [L.qconfig_limit(pattern, checker, qconfig)]
    else:
        found = []
    for n in names:
        own = [lim for lim in found if lim.node in (None, n)]    # evidence from the node itself only
        for lim in own:
            v.limits.setdefault(n, [])
            if lim.text not in v.limits[n]:
                v.limits[n].append(lim.text)
        if own and all(lim.layout for lim in own) and n not in v.layout_limited:
            v.layout_limited.append(n)


def collect_verdicts(quantizer: Any, prepared: Any, explicit: bool = False) -> QuantizerDecisions:
    v = QuantizerDecisions()
    live = {n.name: n for n in prepared.graph.nodes}
    reporter = None
    for q in getattr(quantizer, "quantizers", []):
        reporter = getattr(q, "reporter", None)
        if reporter is not None:
            break
    if reporter is not None:
        for rep in reporter.quantizers.values():
            info = rep.quantizer_info
            label = f"{info.name} ({info.qconfig_label.rsplit('.', 1)[-1]})"
            entry = {"name": info.name, "targets": info.targeted_nodes_description,
                     "qconfig": info.qconfig_label, "accepted": [], "rejected": []}
            for acc in rep.accepted_patterns:
                names = [n.name for n in acc.nodes]
                entry["accepted"].append(names)
                for n in names:
                    v.accepted.setdefault(n, label)
            for rej in rep.rejected_patterns:
                entry["rejected"].append({"nodes": list(rej.node_names), "reason": rej.rejection_reason})
                if rej.rejection_reason == "Tried annotating already quantized node.":
                    continue
                for n in rej.node_names:
                    v.rejected.setdefault(n, [])
                    if rej.rejection_reason not in v.rejected[n]:
                        v.rejected[n].append(rej.rejection_reason)
                try:
                    _record_limits(v, live, list(rej.node_names), rej.rejection_reason,
                                   info.qconfig_label, explicit)
                except Exception as e:  # noqa: BLE001 - a diagnosis must never break a lowering
                    for n in rej.node_names:
                        v.limits.setdefault(n, []).append(f"(limit not determined: {type(e).__name__}: {e})")
            v.quantizers.append(entry)
        try:
            v.report_text = reporter.get_quantization_report(prepared, True)
        except Exception as e:  # noqa: BLE001 - the text report is a nicety
            v.report_text = f"(quantization report unavailable: {e})"
    v.not_annotated = [n.name for n in prepared.graph.nodes
                       if n.op == "call_function" and Q_ANNOTATION_KEY not in n.meta
                       and "observer" not in n.name and "activation_post_process" not in n.name]
    return v


def quarantine_quantizer(quantizer: Any, node_names: list[str]) -> None:
    """Leave `node_names` unquantized: ExecuTorch's own way, as TOSAQuantizer.set_node_name(name,
    None) does it — a PatternQuantizer with config None over a NodeNameNodeFinder, inserted first so it
    claims the nodes before the Cortex-M pattern quantizers (PatternMatcher: "Annotating with None
    means rejecting quantization - this is always supported")."""
    from executorch.backends.arm.quantizer.arm_quantizer_utils import PatternQuantizer
    from executorch.backends.cortex_m.quantizer.node_finders import ModuleNameNodeFinder, NodeNameNodeFinder

    matcher = next(q.pattern_matcher for q in quantizer.quantizers if hasattr(q, "pattern_matcher"))
    nodes = [n for n in node_names if not n.startswith("module:")]
    modules = [n.split(":", 1)[1] for n in node_names if n.startswith("module:")]
    if modules:       # "module:NAME": the whole nn.Module, as set_module_name(NAME, None)
        quantizer.quantizers.insert(0, PatternQuantizer(None, ModuleNameNodeFinder(modules), matcher))
    if nodes:
        quantizer.quantizers.insert(0, PatternQuantizer(None, NodeNameNodeFinder(nodes), matcher))


def quantize(module: Any, example_inputs: tuple, calibration: list[tuple], flow: str,
             status: Callable[[str], None] | None = None, activations: str = "int8",
             quarantine: dict[str, dict[str, Any]] | None = None,
             memo: CalibrationMemo | None = None) -> tuple[Any, QuantizerDecisions]:
    """prepare_pt2e → calibrate → convert_pt2e on `module` (an exported GraphModule).
    `quarantine`: {node name at quantisation time, or "module:NAME": why} to leave in float (--keep-going).
    `memo`: observer states and qparams of an earlier round on the same float graph (--keep-going): when
    it knows every observer, calibration is skipped (exact: see calibration_memo)."""
    say = status or (lambda _t: None)
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    per_tensor = None
    if activations == "int16":
        from executorch.backends.cortex_m.quantizer.quantization_configs import INT16_PER_TENSOR_CONFIG

        per_tensor = INT16_PER_TENSOR_CONFIG
    quantizer = CortexMQuantizer(per_tensor_config=per_tensor, use_explicit_layout=(flow == "explicit"))
    if quarantine:
        quarantine_quantizer(quantizer, list(quarantine))
    say("quantizing: prepare_pt2e (annotating with CortexMQuantizer)")
    prepared = prepare_pt2e(module, quantizer)
    verdicts = collect_verdicts(quantizer, prepared, explicit=(flow == "explicit"))
    for name, label in list(verdicts.accepted.items()):
        if "NO_QCONFIG" in label:               # "accepted" by the None-config quantizer: not quantized
            verdicts.accepted.pop(name)
    for name, why in (quarantine or {}).items():
        verdicts.quarantined[name] = dict(why)
    keys = observer_keys(prepared) if memo is not None else {}
    if memo is not None and memo.covers(keys):
        memo.load(prepared, keys)
        say(f"quantizing: calibration of all {len(set(keys.values()))} observers reused from the earlier round "
            f"({len(calibration)} samples not run again)")
    else:
        known = memo.load(prepared, keys) if memo is not None else []
        if known:
            total, reused = len(set(keys.values())), len({keys[t] for t in known})
            say(f"quantizing: calibration of {reused} of {total} observers reused from the earlier "
                f"round; calibrating the {total - reused} new ones")
        for i, sample in enumerate(calibration, 1):
            say(f"quantizing: calibration sample {i}/{len(calibration)}")
            prepared(*sample)
        if memo is not None:
            memo.save(prepared, keys)
    if memo is not None:
        memo.memoize_qparams(prepared, keys)
    say("quantizing: convert_pt2e")
    converted = convert_pt2e(prepared)
    return converted, verdicts
