"""The lowering of a loaded model, round after round: a round runs every stage; with --keep-going a failed
pass, a quantizer-stage failure or a pre-flight finding picks its workaround (a value-preserving edit of a
copy of the export, or ops left in float) and the next round lowers again, at most one round per cause."""
from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any, Callable

from backend_core.analyses.preflight import attach as attach_preflight, check_snapshot, findings_of
from backend_core.common.errors import Cancelled, CmlensError, StageFailedError
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.lowering.lower.calls import LowerHooks, LowerOutputs
from backend_core.lowering.lower.keep_going import (MAX_ROUNDS, next_quarantine, next_rewrite,
                                                    next_target_quarantine, next_target_rewrite)
from backend_core.lowering.lower.layout_copies import copies_on_final
from backend_core.lowering.result import LoweringResult, supported_targets
from backend_core.stages.fallback import FallbackContext, explain_fallbacks
from backend_core.stages.fallback.program_args import NAME as INT_LISTS
from backend_core.stages.fallback.program_layout import NAME as PROGRAM_COPIES
from backend_core.stages.fallback.program_linear import NAME as LINEAR_AS_ADDMM
from backend_core.stages.fallback.rewrites import REWRITES, compose
from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions
from backend_core.stages.pipeline.calibration_memo import CalibrationMemo


@dataclass
class LoweringRounds:
    """One lowering of `model` with `opts`: `run()` returns the last round's result and pipeline."""

    name: str
    source: str
    opts: PipelineOptions
    model: Any
    planned: list[str]
    hooks: LowerHooks
    outputs: LowerOutputs
    verify_suggestions: bool = False
    dependencies: list[dict[str, Any]] = field(default_factory=list)
    cache_note: str = ""
    quarantine: dict[str, dict[str, Any]] = field(default_factory=dict)   # --keep-going: ops left in float
    rewrites: dict[str, dict[str, Any]] = field(default_factory=dict)     # --keep-going: edits of the export
    rounds: int = 0

    def run(self) -> tuple[LoweringResult, LoweringPipeline]:
        memo = CalibrationMemo() if self.opts.keep_going else None   # a round on the same float graph reuses it
        for round_no in range(1, MAX_ROUNDS + 1):
            self.rounds = round_no
            if round_no > 1:
                gc.collect()        # the collector is paused over a lowering: the last round's garbage goes here
            result, pipe, final_ctx = self._round(round_no, memo)
            again = self.opts.keep_going and round_no < MAX_ROUNDS
            if result.status == "failed" and result.error is not None and self._after_failure(result, pipe, round_no,
                                                                                              again):
                continue
            if result.status == "done" and again and self._after_findings(pipe, final_ctx, round_no):
                continue
            break
        self._record(result, pipe)
        return result, pipe

    def _round(self, round_no: int, memo: CalibrationMemo | None
               ) -> tuple[LoweringResult, LoweringPipeline, FallbackContext | None]:
        for edit in (PROGRAM_COPIES, INT_LISTS, LINEAR_AS_ADDMM):  # made again on this round's program when needed
            self.rewrites.pop(edit, None)
        float_edits = [r for r in self.rewrites if r in REWRITES]
        # the edge copy also lets a bundle name its quantisation difference (lowering/references.py)
        pipe = LoweringPipeline(self.model, self.opts, self.hooks.on_status,
                                keep_edge_program=self.outputs.edge_program or self.outputs.bpte,
                                quarantine=self.quarantine, float_rewrite=compose(float_edits),
                                calibration_memo=memo.for_graph(tuple(float_edits)) if memo else None)
        result = LoweringResult(self.name, self.source, self.opts, "running", pipe.snapshots, {}, self.planned,
                                pipeline=pipe, verify_suggestions=self.verify_suggestions,
                                dependencies=self.dependencies, cache_note=self.cache_note)
        keeper = None
        if self.outputs.stages:                 # host-runnable copies of each stage for the numerics step
            from backend_core.analyses.numerics.capture import StageKeeper

            keeper = StageKeeper()
            result.stage_programs, result.loaded_model = keeper.stages, self.model
        final_ctx = None
        try:
            for stage in pipe.run():
                if keeper is not None:
                    keeper.observe(stage, pipe)
                snap = stage.snapshot
                if snap.kind == "final":
                    final_ctx, snap = self._final_stage(pipe, result, round_no)
                if self.hooks.on_stage:
                    self.hooks.on_stage(snap, self.planned)
                if self.hooks.cancelled() and snap.kind != "final":
                    result.status = "cancelled"
                    break
            else:
                result.status = "done"
        except Cancelled:
            result.status = "cancelled"
        except StageFailedError as e:
            result.status = "failed"
            result.error = {"stage": e.stage, "node": e.node, "message": e.message, "hint": e.hint,
                            "traceback": e.detail, "failure": getattr(e, "failure", None)}
        return result, pipe, final_ctx

    def _final_stage(self, pipe: LoweringPipeline, result: LoweringResult, round_no: int
                     ) -> tuple[FallbackContext, GraphSnapshot]:
        """The final graph: why each op fell back, the verified fixes, and what the pre-flight says of the
        serialised program (what the runtime sees, with the ops to_executorch inserts; issue 21)."""
        opts, status = self.opts, self.hooks.on_status
        ctx = FallbackContext(list(pipe.snapshots), pipe.verdicts.to_dict(), opts.target, opts.flow,
                              supported_targets())
        pipe.snapshots[-1] = explain_fallbacks(ctx)
        if self.verify_suggestions:
            from backend_core.lowering.lower.verify import verify_suggestions as verify

            pipe.snapshots[-1] = verify(pipe.snapshots[-1], self.model, opts, ctx.supported_targets, status)
        snap = pipe.snapshots[-1]
        program = preflight_program(pipe.final_program, status)
        attach_preflight(snap, check_snapshot(snap, program=program))
        if opts.keep_going and not (round_no < MAX_ROUNDS   # the float-export rewrites come first
                                    and next_target_rewrite(findings_of(snap), self.rewrites, round_no)):
            # none left to try: dim-order copies on this program for the layout findings, same round
            fixed = copies_on_final(pipe, opts.target, opts.flow, ctx.supported_targets, round_no,
                                    lambda p: preflight_program(p, status), status, program)
            if fixed is not None:
                self.rewrites.update(fixed[0])
                program, snap = fixed[1], pipe.snapshots[-1]
        if program is not None:
            result.blobs["model.pte"] = program
        return ctx, snap

    def _after_failure(self, result: LoweringResult, pipe: LoweringPipeline, round_no: int, again: bool) -> bool:
        """A stage failed: True when --keep-going found a workaround for the next round."""
        assert result.error is not None
        failure, stage = result.error["failure"], result.error["stage"]
        fix = next_rewrite(failure, self.rewrites, round_no) if again else {}
        if fix:
            self.rewrites.update(fix)
            self.hooks.status(f"--keep-going: {stage} failed; applying the workaround {', '.join(fix)} "
                              f"({REWRITES[next(iter(fix))][1]}) to a copy of the export and lowering again "
                              f"(round {round_no + 1}/{MAX_ROUNDS})")
            return True
        more = next_quarantine(failure, self.quarantine, pipe.verdicts.accepted, round_no) if again else {}
        if more:
            self.quarantine.update(more)
            self.hooks.status(f"--keep-going: {stage} failed on {', '.join(more)}; leaving them in float "
                              f"and lowering again (round {round_no + 1}/{MAX_ROUNDS})")
            return True
        if self.quarantine or self.rewrites:
            result.error["keep_going"] = {"rounds": round_no, "quarantined": self.quarantine,
                                          "rewrites": self.rewrites}
        return False

    def _after_findings(self, pipe: LoweringPipeline, final_ctx: FallbackContext | None, round_no: int) -> bool:
        """It lowered, but the pre-flight says the target fails or gives wrong values: True when a workaround
        for the next round was found."""
        findings = findings_of(pipe.snapshots[-1])
        fix = next_target_rewrite(findings, self.rewrites, round_no)
        if fix:
            self.rewrites.update(fix)
            self.hooks.status(f"--keep-going: the pre-flight says {sum(len(r['nodes']) for r in fix.values())} "
                              f"op(s) will fail or give wrong values on the target; applying {', '.join(fix)} and "
                              f"lowering again (round {round_no + 1}/{MAX_ROUNDS})")
            return True
        more = next_target_quarantine(findings, _user_op_name(final_ctx, pipe.snapshots[-1]), self.quarantine,
                                      round_no)
        if more:      # a CMSIS-NN add/mul the target would abort on (a float operand): leave it in float
            self.quarantine.update(more)
            self.hooks.status(f"--keep-going: the pre-flight says the target aborts on {', '.join(more)} (an "
                              f"operand ExecuTorch never quantized); leaving them in float and lowering again "
                              f"(round {round_no + 1}/{MAX_ROUNDS})")
            return True
        return False

    def _record(self, result: LoweringResult, pipe: LoweringPipeline) -> None:
        """What every report says of how this program was made."""
        result.verdicts = pipe.verdicts.to_dict()
        if self.opts.keep_going:     # how many lowerings --keep-going took (at most one round per distinct cause)
            result.verdicts["keep_going_rounds"] = self.rounds
        if self.rewrites:            # not what plain ExecuTorch produces: every report says which edits were made
            result.verdicts["rewrites"] = self.rewrites
        if pipe.rewritten:           # --rewrite rnn-cells: which modules were written as cells (or why not)
            result.verdicts["rnn_cells"] = pipe.rewritten


def _user_op_name(ctx: Any, final: GraphSnapshot) -> Callable[[str], str | None]:
    """Final node id -> the name of the op the user wrote, at quantisation time (None: not traced)."""
    def name(node_id: str) -> str | None:
        node = final.node(node_id)
        q = ctx.users().quantized_node(node) if (node is not None and ctx is not None) else None
        return q.name if q is not None else None
    return name


def preflight_program(final_program: Any, on_status: Callable[[str], None] | None) -> bytes | None:
    """The .pte bytes the pre-flight reads; None when serialising fails (the .pte step reports it)."""
    from backend_core.stages.pipeline.program_files import pte_bytes

    if on_status:
        on_status("serialising the program for the pre-flight")
    try:
        return pte_bytes(final_program)
    except CmlensError:
        return None
