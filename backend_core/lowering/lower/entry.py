"""One call that the CLI, the GUI worker and the tests share: lower a model source with
options, stage by stage, with a result that survives a failed stage, and a cache."""
from __future__ import annotations

import gc
import time
from dataclasses import replace
from typing import Any, Callable

from backend_core.stages.cache import ResultCache, cache_key
from backend_core.common.errors import Cancelled, CmlensError, StageFailedError
from backend_core.common.gc_pause import collector_paused_in
from backend_core.stages.fallback import FallbackContext, explain_fallbacks
from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.models.calibration import input_folder_dependencies
from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions, planned_stage_names
from backend_core.lowering.result import LoweringResult, supported_targets
from backend_core.stages.pipeline.calibration_memo import CalibrationMemo
from backend_core.stages.pipeline.stages import Stage
from backend_core.lowering.lower.layout_copies import copies_on_final
from backend_core.stages.fallback.program_args import NAME as INT_LISTS
from backend_core.stages.fallback.program_linear import NAME as LINEAR_AS_ADDMM
from backend_core.stages.fallback.program_layout import NAME as PROGRAM_COPIES
from backend_core.lowering.lower.keep_going import (MAX_ROUNDS, next_quarantine, next_rewrite, next_target_quarantine,
                                                    next_target_rewrite)
from backend_core.stages.fallback.rewrites import REWRITES, compose
from backend_core.analyses.preflight import attach as attach_preflight, check_snapshot, findings_of
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.common.cpus import normalise_target

StageCallback = Callable[[GraphSnapshot, list[str]], None]


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
def lower(source: str, options: PipelineOptions = PipelineOptions(), *,
          on_stage: StageCallback | None = None, should_stop: Callable[[], bool] | None = None,
          use_cache: bool = True, want_pte: bool = False, want_bpte: bool = False,
          on_status: Callable[[str], None] | None = None, keep_programs: bool = False,
          artefact_companions: dict[str, Any] | None = None,
          verify_suggestions: bool = False, keep_stages: bool = False,
          on_model: Callable[[Any], None] | None = None) -> LoweringResult:
    """Lower `source`. Raises BadInputError for bad sources/options; a failing stage gives a
    result with status "failed" and the stages before it. `keep_programs` also keeps a copy of
    the edge program on `result.pipeline` (for reference runs and tests). `verify_suggestions`
    re-lowers modified copies to check the fixes the tool can try (backend_core.lowering.lower.verify).
    `keep_stages` keeps a private copy of every host-runnable stage (`result.stage_programs`: the numerics
    step runs them; no cache, the copies are live objects); `on_model(loaded)` is called once the model is
    loaded, before any stage runs (a step checks its own inputs against the model's there: a bad folder
    fails in a second, not after the lowering)."""
    t_start = time.perf_counter()
    spec = parse_model_source(source)
    if spec.kind == "artefact":     # .pte/.bpte/.etrecord/.etdump: read into snapshots, not lowered
        from backend_core.lowering.artefacts.as_lowering import lower_artefact

        return lower_artefact(source, spec.path, options, on_stage=on_stage, on_status=on_status,
                              use_cache=use_cache, companions=artefact_companions)
    opts = replace(options, target=normalise_target(options.target))
    cache = ResultCache()
    key = cache_key(spec.fingerprint(), opts.key() + ("|verify" if verify_suggestions else ""))
    need = {n for n, w in (("model.pte", want_pte), ("model.bpte", want_bpte), ("references.json", want_bpte)) if w}
    note = ""
    if use_cache and not keep_stages:
        found = cache.lookup(key)           # checks the entry's recorded files: an edited helper is a miss
        hit, note = found.entry, found.reason
        if note and on_status:
            on_status(f"not from the cache: {note}; lowering again")
        if hit is None and verify_suggestions:
            hit = _verify_cached(cache, cache_key(spec.fingerprint(), opts.key()), key, spec, opts, on_status)
        if hit is not None and need <= set(hit[1]):
            payload, blobs = hit
            snaps = payload["snapshots"]
            for s in snaps:
                if on_stage:
                    on_stage(s, payload["planned_stages"])
            return LoweringResult(payload["model"], source, opts, payload["status"], snaps,
                                  payload["verdicts"], payload["planned_stages"], payload.get("error"),
                                  from_cache=True, seconds=time.perf_counter() - t_start, blobs=blobs,
                                  verify_suggestions=verify_suggestions,
                                  dependencies=[d.to_dict() for d in cache.dependencies(key)])

    if on_status:
        on_status("importing ExecuTorch")
    planned = planned_stage_names(opts.flow)
    if on_status:
        on_status(f"loading {spec.name}")
    model = load_model(spec)
    if on_model is not None:
        on_model(model)
    deps = model.dependencies + input_folder_dependencies(opts.calib)
    on_status = _stopping(on_status, should_stop)   # a stop is seen at the next status, inside a stage too
    quarantine: dict[str, dict[str, Any]] = {}      # --keep-going: ops taken out of quantisation
    rewrites: dict[str, dict[str, Any]] = {}        # --keep-going: value-preserving edits of the export
    memo = CalibrationMemo() if opts.keep_going else None   # a round on the same float graph reuses it
    for round_no in range(1, MAX_ROUNDS + 1):
        if round_no > 1:
            gc.collect()        # the collector is paused over a lowering: the last round's garbage goes here
        for edit in (PROGRAM_COPIES, INT_LISTS, LINEAR_AS_ADDMM):     # made again on this round's program when still needed
            rewrites.pop(edit, None)
        # the edge copy also lets a bundle name its quantisation difference (lowering/references.py)
        float_edits = [r for r in rewrites if r in REWRITES]
        pipe = LoweringPipeline(model, opts, on_status, keep_edge_program=keep_programs or want_bpte,
                                quarantine=quarantine, float_rewrite=compose(float_edits),
                                calibration_memo=memo.for_graph(tuple(float_edits)) if memo else None)
        result = LoweringResult(spec.name, source, opts, "running", pipe.snapshots, {}, planned, pipeline=pipe,
                                verify_suggestions=verify_suggestions, dependencies=[d.to_dict() for d in deps],
                                cache_note=note)
        keeper = None
        if keep_stages:                 # host-runnable copies of each stage for the numerics step
            from backend_core.analyses.numerics.capture import StageKeeper

            keeper = StageKeeper()
            result.stage_programs, result.loaded_model = keeper.stages, model
        stage: Stage
        try:
            for stage in pipe.run():
                if keeper is not None:
                    keeper.observe(stage, pipe)
                snap = stage.snapshot
                if snap.kind == "final":
                    ctx = FallbackContext(list(pipe.snapshots), pipe.verdicts.to_dict(), opts.target,
                                          opts.flow, supported_targets())
                    final_ctx = ctx
                    pipe.snapshots[-1] = explain_fallbacks(ctx)
                    if verify_suggestions:
                        from backend_core.lowering.lower.verify import verify_suggestions as verify

                        pipe.snapshots[-1] = verify(pipe.snapshots[-1], model, opts, ctx.supported_targets,
                                                    on_status)
                    snap = pipe.snapshots[-1]
                    # what will fail on the target: the kernel rules read the serialised program (what the
                    # runtime sees, with the ops to_executorch inserts), so serialise it here (issue 21)
                    program = _preflight_program(pipe.final_program, on_status)
                    attach_preflight(snap, check_snapshot(snap, program=program))
                    if opts.keep_going and not (round_no < MAX_ROUNDS   # the float-export rewrites come first
                                                and next_target_rewrite(findings_of(snap), rewrites, round_no)):
                        # none left to try: dim-order copies on this program for the layout findings, same round
                        fixed = copies_on_final(pipe, opts.target, opts.flow, ctx.supported_targets, round_no,
                                                lambda p: _preflight_program(p, on_status), on_status, program)
                        if fixed is not None:
                            rewrites.update(fixed[0])
                            program, snap = fixed[1], pipe.snapshots[-1]
                    if program is not None:
                        result.blobs["model.pte"] = program
                if on_stage:
                    on_stage(snap, planned)
                if should_stop and should_stop() and snap.kind != "final":
                    result.status = "cancelled"
                    break
            else:
                result.status = "done"
        except Cancelled:
            result.status = "cancelled"
            break
        except StageFailedError as e:
            result.status = "failed"
            result.error = {"stage": e.stage, "node": e.node, "message": e.message, "hint": e.hint,
                            "traceback": e.detail}
            result.error["failure"] = getattr(e, "failure", None)
            fix = (next_rewrite(result.error["failure"], rewrites, round_no)
                   if opts.keep_going and round_no < MAX_ROUNDS else {})
            if fix:
                rewrites.update(fix)
                if on_status:
                    on_status(f"--keep-going: {e.stage} failed; applying the workaround "
                              f"{', '.join(fix)} ({REWRITES[next(iter(fix))][1]}) to a copy of the export and "
                              f"lowering again (round {round_no + 1}/{MAX_ROUNDS})")
                continue
            more = (next_quarantine(result.error["failure"], quarantine, pipe.verdicts.accepted, round_no)
                    if opts.keep_going and round_no < MAX_ROUNDS else {})
            if more:
                quarantine.update(more)
                if on_status:
                    on_status(f"--keep-going: {e.stage} failed on {', '.join(more)}; leaving them in float "
                              f"and lowering again (round {round_no + 1}/{MAX_ROUNDS})")
                continue
            if quarantine or rewrites:
                result.error["keep_going"] = {"rounds": round_no, "quarantined": quarantine, "rewrites": rewrites}
        if result.status == "done" and opts.keep_going and round_no < MAX_ROUNDS:
            fix = next_target_rewrite(findings_of(pipe.snapshots[-1]), rewrites, round_no)
            if fix:       # it lowered, but the pre-flight says the target fails or gives wrong values: avoid that
                rewrites.update(fix)
                if on_status:
                    on_status(f"--keep-going: the pre-flight says {sum(len(r['nodes']) for r in fix.values())} op(s) will "
                              f"fail or give wrong values on the target; applying {', '.join(fix)} and lowering again "
                              f"(round {round_no + 1}/{MAX_ROUNDS})")
                continue
            more = next_target_quarantine(findings_of(pipe.snapshots[-1]), _user_op_name(final_ctx, pipe.snapshots[-1]),
                                          quarantine, round_no)
            if more:      # a CMSIS-NN add/mul the target would abort on (a float operand): leave it in float
                quarantine.update(more)
                if on_status:
                    on_status(f"--keep-going: the pre-flight says the target aborts on {', '.join(more)} (an operand "
                              f"ExecuTorch never quantized); leaving them in float and lowering again "
                              f"(round {round_no + 1}/{MAX_ROUNDS})")
                continue
        break
    result.verdicts = pipe.verdicts.to_dict()
    if opts.keep_going:     # how many lowerings --keep-going took (at most one round per distinct cause)
        result.verdicts["keep_going_rounds"] = round_no
    if rewrites:            # not what plain ExecuTorch produces: every report says which edits were made
        result.verdicts["rewrites"] = rewrites
    if pipe.rewritten:      # --rewrite rnn-cells: which modules were written as cells (or why not)
        result.verdicts["rnn_cells"] = pipe.rewritten
    if result.status == "done":
        try:
            if want_pte and "model.pte" not in result.blobs:
                from backend_core.stages.pipeline.program_files import pte_bytes

                if on_status:
                    on_status("serialising .pte")
                result.blobs["model.pte"] = pte_bytes(pipe.final_program)
            if want_bpte:
                from backend_core.lowering.lower.references import bundle_with_references

                if on_status:
                    on_status("building bundled .bpte (expected outputs: the lowered program on the host)")
                result.blobs["model.bpte"], refs = bundle_with_references(pipe, on_status)
                result.blobs["references.json"] = refs.to_json()
                attach_preflight(result.final, check_snapshot(None, bundle=result.blobs["model.bpte"]))
        except Cancelled:
            result.status = "cancelled"
        except CmlensError as e:
            result.status = "failed"
            result.error = {"stage": getattr(e, "stage", "program files"), "node": None,
                            "message": e.message, "hint": _hint_with_findings(e.hint, result.final),
                            "traceback": e.detail}
    result.seconds = time.perf_counter() - t_start
    if result.status == "done":
        cache.store(key, {"model": result.model, "status": result.status, "error": result.error,
                          "verdicts": result.verdicts, "planned_stages": result.planned_stages,
                          "snapshots": list(result.snapshots)}, result.blobs, deps)
    return result


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


def _stopping(on_status: Callable[[str], None] | None,
              should_stop: Callable[[], bool] | None) -> Callable[[str], None] | None:
    """The status callback, raising Cancelled once a stop was asked: the pipeline reports status between
    calibration samples and passes, so a stop takes effect within a sample, not after an 18 s stage."""
    if should_stop is None:
        return on_status

    def status(text: str) -> None:
        if should_stop():
            raise Cancelled(f"stopped before: {text}")
        if on_status is not None:
            on_status(text)
    return status


def _user_op_name(ctx: Any, final: GraphSnapshot) -> Callable[[str], str | None]:
    """Final node id -> the name of the op the user wrote, at quantisation time (None: not traced)."""
    def name(node_id: str) -> str | None:
        node = final.node(node_id)
        q = ctx.users().quantized_node(node) if node is not None else None
        return q.name if q is not None else None
    return name


def _preflight_program(final_program: Any, on_status: Callable[[str], None] | None) -> bytes | None:
    """The .pte bytes the pre-flight reads; None when serialising fails (the .pte step reports it)."""
    from backend_core.stages.pipeline.program_files import pte_bytes

    if on_status:
        on_status("serialising the program for the pre-flight")
    try:
        return pte_bytes(final_program)
    except CmlensError:
        return None
