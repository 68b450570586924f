"""One call that the CLI, the GUI worker and the tests share: lower a model source with
options, stage by stage, with a result that survives a failed stage, and a cache."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

from backend_core.analyses.preflight import attach as attach_preflight, check_snapshot, findings_of
from backend_core.common.cpus import normalise_target
from backend_core.common.errors import Cancelled, CmlensError
from backend_core.common.gc_pause import collector_paused_in
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.lowering.lower.calls import LowerHooks, LowerOutputs, StageCallback
from backend_core.lowering.lower.rounds import LoweringRounds
from backend_core.lowering.result import LoweringResult, supported_targets
from backend_core.stages.cache import ResultCache, cache_key
from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.models.calibration import input_folder_dependencies
from backend_core.stages.pipeline import PipelineOptions, planned_stage_names

__all__ = ["LowerHooks", "LowerOutputs", "StageCallback", "lower"]


def _verify_cached(cache: ResultCache, base_key: str, key: str, spec: Any, opts: PipelineOptions,
                   on_status: Callable[[str], None] | None) -> tuple[dict, dict] | None:
    """--verify-suggestions on a lowering that is already cached: only the re-lowerings of the
    modified copies run (the GUI's Verify button after a lowering), stored under `key`."""
    base = cache.load(base_key)
    if base is None or base[0]["status"] != "done":
        return None
    from backend_core.lowering.lower.verify import verify_suggestions as verify

    payload, blobs = base
    snaps = list(payload["snapshots"])
    snaps[-1] = verify(snaps[-1], load_model(spec), opts, supported_targets(), on_status)
    payload = {**payload, "snapshots": snaps}
    cache.store(key, payload, blobs, cache.dependencies(base_key))
    return payload, blobs


@collector_paused_in
def lower(source: str, options: PipelineOptions = PipelineOptions(), *, outputs: LowerOutputs = LowerOutputs(),
          hooks: LowerHooks = LowerHooks(), use_cache: bool = True, verify_suggestions: bool = False,
          artefact_companions: dict[str, str] | None = None) -> LoweringResult:
    """Lower `source`. Raises BadInputError for bad sources/options; a failing stage gives a result with
    status "failed" and the stages before it. `verify_suggestions` re-lowers modified copies to check the
    fixes the tool can try (backend_core.lowering.lower.verify); an artefact (.pte, .bpte, .etrecord,
    .etdump) is read, with `artefact_companions` (its other files), not lowered."""
    t_start = time.perf_counter()
    spec = parse_model_source(source)
    if spec.kind == "artefact":     # .pte/.bpte/.etrecord/.etdump: read into snapshots, not lowered
        from backend_core.lowering.artefacts.as_lowering import lower_artefact

        return lower_artefact(source, spec.path, options, on_stage=hooks.on_stage, on_status=hooks.on_status,
                              use_cache=use_cache, companions=artefact_companions)
    opts = replace(options, target=normalise_target(options.target))
    cache = ResultCache()
    key = cache_key(spec.fingerprint(), opts.key() + ("|verify" if verify_suggestions else ""))
    note = ""
    if use_cache and not outputs.stages:
        cached, note = _from_cache(cache, key, source, spec, opts, outputs, hooks, verify_suggestions)
        if cached is not None:
            cached.seconds = time.perf_counter() - t_start
            return cached
    hooks.status("importing ExecuTorch")
    planned = planned_stage_names(opts.flow)
    hooks.status(f"loading {spec.name}")
    model = load_model(spec)
    if hooks.on_model is not None:
        hooks.on_model(model)
    deps = model.dependencies + input_folder_dependencies(opts.calib)
    hooks = hooks.cancelling()   # a cancel is seen at the next status, inside a stage too
    result, pipe = LoweringRounds(spec.name, source, opts, model, planned, hooks, outputs, verify_suggestions,
                                  [d.to_dict() for d in deps], note).run()
    if result.status == "done":
        _program_files(result, pipe, outputs, hooks)
    result.seconds = time.perf_counter() - t_start
    if result.status == "done":
        cache.store(key, {"model": result.model, "status": result.status, "error": result.error,
                          "verdicts": result.verdicts, "planned_stages": result.planned_stages,
                          "snapshots": list(result.snapshots)}, result.blobs, deps)
    return result


def _from_cache(cache: ResultCache, key: str, source: str, spec: Any, opts: PipelineOptions, outputs: LowerOutputs,
                hooks: LowerHooks, verify_suggestions: bool) -> tuple[LoweringResult | None, str]:
    """The cached lowering when it has every file asked for, and why not when an entry was there but stale."""
    found = cache.lookup(key)           # checks the entry's recorded files: an edited helper is a miss
    hit, note = found.entry, found.reason
    if note:
        hooks.status(f"not from the cache: {note}; lowering again")
    if hit is None and verify_suggestions:
        hit = _verify_cached(cache, cache_key(spec.fingerprint(), opts.key()), key, spec, opts, hooks.on_status)
    if hit is None or not outputs.blobs() <= set(hit[1]):
        return None, note
    payload, blobs = hit
    for s in payload["snapshots"]:
        if hooks.on_stage:
            hooks.on_stage(s, payload["planned_stages"])
    return LoweringResult(payload["model"], source, opts, payload["status"],
                          payload["snapshots"], payload["verdicts"], payload["planned_stages"], payload.get("error"),
                          from_cache=True, blobs=blobs, verify_suggestions=verify_suggestions,
                          dependencies=[d.to_dict() for d in cache.dependencies(key)]), note


def _program_files(result: LoweringResult, pipe: Any, outputs: LowerOutputs, hooks: LowerHooks) -> None:
    """The .pte and the bundled .bpte (expected outputs: the lowered program run on the host) asked for."""
    try:
        if outputs.pte and "model.pte" not in result.blobs:
            from backend_core.stages.pipeline.program_files import pte_bytes

            hooks.status("serialising .pte")
            result.blobs["model.pte"] = pte_bytes(pipe.final_program)
        if outputs.bpte:
            from backend_core.lowering.lower.references import bundle_with_references

            hooks.status("building bundled .bpte (expected outputs: the lowered program on the host)")
            result.blobs["model.bpte"], refs = bundle_with_references(pipe, hooks.on_status)
            result.blobs["references.json"] = refs.to_json()
            attach_preflight(result.final, check_snapshot(None, bundle=result.blobs["model.bpte"]))
    except Cancelled:
        result.status = "cancelled"
    except CmlensError as e:
        result.status = "failed"
        result.error = {"stage": getattr(e, "stage", "program files"), "node": None,
                        "message": e.message, "hint": _hint_with_findings(e.hint, result.final),
                        "traceback": e.detail}


def _hint_with_findings(hint: str, final: GraphSnapshot | None) -> str:
    """A program file that could not be built, when the pre-flight already says the program will fail: the
    host run of the lowered program fails at the same op (a cortex_m kernel fed a float tensor raises in its
    Python reference as the target's aborts), so name that finding and its fix rather than only the error."""
    certain = [f for f in findings_of(final) if f.certain]
    if not certain:
        return hint
    f = certain[0]
    more = f" (and {len(certain) - 1} more)" if len(certain) > 1 else ""
    return (f"{hint} The pre-flight says this program will fail on the target{more}: {f.node} ({f.op}) "
            f"[{f.rule}] {f.message.split(': ExecuTorch')[0]}.\nfix: {f.fix}")
