"""The bundle of a lowering and its references record: expected outputs = the lowered program run on
the host, compared with the PT2E fake-quant model in output steps, and the difference named: which
layers of the lowered program differ from fake-quant by themselves (the numerics' local error: a layer's kernel rerun on the
fake-quant values of its inputs).

Why local and not cumulative: later layers inherit an early layer's difference, so a cumulative
comparison blames every layer after the first. Measured on gelu_conv (M55): only the conv's local
output differs (requantisation by a fixed-point multiplier and shift against fake-quant's float
scale: 1 step), and the GELU lookup table then maps that step to up to 2 output steps."""
from __future__ import annotations

from typing import Any

from backend_core.target.judge.references import References, references_from_bundle

MAX_CAUSES = 4
# Naming reruns every layer on the fake-quant inputs: about 2-3 host runs of the lowered program. mv2's
# host run took 2 min on a loaded 2-core machine (int32 convolutions are not vectorised), naming 4 min
# more: above this budget the difference is sized but not named (`cmlens numerics` names it).
NAME_BUDGET_S = 20.0
KNOWN_BUDGET_S = 60.0      # one host run more, and it decides between "target bug" and "known difference"


def bundle_with_references(pipeline: Any, on_status: Any = None) -> tuple[bytes, References]:
    """(.bpte bytes, References) of a finished LoweringPipeline: the bundle's expected outputs are the
    lowered program's (with the known host/CMSIS-NN kernel differences computed the target's way); the
    fake-quant comparison is named by local_causes when it is not bit for bit."""
    from backend_core.stages.pipeline.program_files import bundle_program

    known: dict[str, Any] = {}

    def adjust(expected: tuple, host_seconds: float) -> tuple:
        out, known["found"], known["note"] = target_expected(pipeline, expected, host_seconds, on_status)
        return out

    bundle = bundle_program(pipeline.final_program, pipeline.quantized_module, pipeline.example_inputs, adjust)
    refs = _named(references_from_bundle(bundle), pipeline, on_status, bundle.host_seconds)
    return bundle.bpte, record_known(refs, known.get("found"), known.get("note"))


def references_for_outputs(pipeline: Any, lowered: tuple, on_status: Any = None,
                           host_seconds: float = 0.0, known: list[Any] | None = None,
                           note: str | None = None) -> References:
    """References when the caller built the bundle itself from `lowered`, the expected outputs that
    target_expected() gave (e.g. the --etdump path that also writes an ETRecord); `known` and `note`
    are what it returned with them."""
    import torch

    from backend_core.stages.pipeline.program_files import Bundle, output_steps_of

    with torch.no_grad():
        fq = pipeline.quantized_module(*pipeline.example_inputs)
    fq = (fq,) if isinstance(fq, torch.Tensor) else tuple(fq)

    def arrays(ts: tuple) -> list[Any]:
        return [t.detach().contiguous().numpy() for t in ts]
    bundle = Bundle(b"", arrays(lowered), arrays(fq), output_steps_of(pipeline.final_program))
    refs = _named(references_from_bundle(bundle), pipeline, on_status, host_seconds)
    return record_known(refs, known, note)


def target_expected(pipeline: Any, expected: tuple, host_seconds: float = 0.0,
                    on_status: Any = None) -> tuple[tuple, list[Any] | None, str | None]:
    """The expected outputs a correct target computes: the lowered program with every op whose host
    reference kernel is known to differ from its CMSIS-NN kernel (judge/kernel_refs.py) computed the
    target's way. Returns (outputs, the ops that differ on this input or None when not computed, a note).
    Why replace, not only record: the runner compares on the target, and a PASS must mean the target
    equals the lowered program as the target's kernels define it; the host reference's rounding of a
    tie is ExecuTorch's Python kernel disagreeing with its own CMSIS-NN kernel, not the program."""
    from backend_core.target.judge.kernel_refs import FaithfulRun, has_known_ops, target_faithful_run

    if not has_known_ops(pipeline.final_program):
        return expected, None, None
    if host_seconds > KNOWN_BUDGET_S:
        return expected, None, (f"the known host/CMSIS-NN kernel differences were not computed (the lowered "
                                f"program's host run took {host_seconds:.0f} s): a FAIL at such an op is not "
                                "told apart from a target bug")
    if on_status:
        on_status("running the lowered program the target's way (known host/CMSIS-NN kernel differences)")
    info = FaithfulRun()
    try:
        faithful, found = target_faithful_run(pipeline.final_program, pipeline.example_inputs,
                                              pipeline.options.target, info)
    except Exception as exc:  # noqa: BLE001  an extra: the host reference stands without it
        return expected, None, f"the known host/CMSIS-NN kernel differences could not be computed ({type(exc).__name__})"
    out = tuple(f.to(e.dtype).contiguous() if hasattr(e, "dtype") else f for f, e in zip(faithful, expected))
    return out, found, _portable_note(info, out, expected)


def _portable_note(info: Any, faithful: tuple, expected: tuple) -> str | None:
    """What computing the float portable ops with ExecuTorch's portable kernels changed, in words."""
    import torch

    if info.portable_unavailable:
        ops = ", ".join(sorted(info.portable_unavailable))
        return (f"{ops}: computed on the host with PyTorch's kernel, not ExecuTorch's portable one (it could not "
                f"be lowered alone: {'; '.join(sorted(set(info.portable_unavailable.values())))[:200]}), so its "
                "float rounding may differ from the target's")
    if not info.portable_nodes:
        return None
    moved = sum(int((f != e).sum()) for f, e in zip(faithful, expected)
                if isinstance(f, torch.Tensor) and isinstance(e, torch.Tensor) and f.shape == e.shape)
    if not moved:
        return None
    return (f"the expected outputs compute the program's {info.portable_nodes} float portable op(s) with "
            f"ExecuTorch's portable kernels, as the target does; PyTorch's kernels round them differently and "
            f"would have moved {moved} output value(s)")


def record_known(refs: References, found: list[Any] | None, note: str | None) -> References:
    if note:
        refs.notes.append(note)
    if found:
        refs.kernel_mismatches = [m.to_dict() for m in found]
        refs.target_kernels = True
    return refs


def _named(refs: References, pipeline: Any, on_status: Any, host_seconds: float) -> References:
    if not refs.quantisation_difference:
        return refs
    if host_seconds > NAME_BUDGET_S:
        refs.notes.append(f"the layers behind the quantisation difference are not named here (the lowered program's "
                          f"host run took {host_seconds:.0f} s; naming costs 2-3 more): `cmlens numerics` names them")
        return refs
    if on_status:
        on_status("naming the quantisation difference (local error per layer)")
    refs.causes = local_causes(pipeline)
    return refs


def local_causes(pipeline: Any, inputs: tuple | None = None) -> list[str]:
    """"conv (quantized_conv2d): local max 1 step" for each layer whose own kernel differs from its
    fake-quant counterpart on one sample (the example inputs), largest first; [] when none does or the
    numerics cannot map the program (the verdict then names no cause rather than a guess)."""
    from backend_core.analyses.numerics.analyze import Sampling, analyze
    from backend_core.analyses.numerics.capture import StageProgram

    stages = [StageProgram("quantized", 1, "quantize", pipeline.quantized_module)]
    if getattr(pipeline, "edge_program", None) is not None:
        stages.append(StageProgram("edge", 2, "edge", pipeline.edge_program))
    stages.append(StageProgram("final", 3, "final", pipeline.final_program))
    try:
        result = analyze(stages, pipeline.snapshots[-1], [inputs or pipeline.example_inputs], sampling=Sampling(sample_size=0))
    except Exception:  # noqa: BLE001  attribution is an extra: the verdict stands without it
        return []
    found = []
    for layer in result.layers:
        loc = layer.local
        if loc is None or loc.identical:
            continue
        size = loc.max_lsb if loc.max_lsb is not None else loc.max_abs
        op = layer.target.replace("cortex_m.", "").replace(".default", "")
        found.append((size, loc.max_lsb is not None, layer.module_path or layer.node_id, op))
    found.sort(key=lambda x: -x[0])

    def unit(x: float, steps: bool) -> str:
        return f"{x:.0f} step(s)" if steps else f"|d| {x:.3g}"
    if len(found) <= MAX_CAUSES:
        return [f"{where} ({op}): local max {unit(x, st)}" for x, st, where, op in found]
    # many layers (mv2: every conv by 1 step, requantisation): one line by op, then the worst layer
    by_op: dict[str, int] = {}
    for _x, _st, _where, op in found:
        by_op[op] = by_op.get(op, 0) + 1
    x, st, where, op = found[0]
    kinds = ", ".join(f"{op} x{n}" for op, n in sorted(by_op.items(), key=lambda kv: -kv[1]))
    out = [f"{len(found)} of {len(result.layers)} layers differ by themselves ({kinds}), "
           f"largest {where} ({op}): local max {unit(x, st)}"]
    return out
