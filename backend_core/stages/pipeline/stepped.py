"""The stepped lowering pipeline: a generator that yields one Stage at a time, so callers show
progress and can stop between stages.

float export → quantized (PT2E, CortexMQuantizer) → edge → one stage per CortexMPassManager pass
→ final (after lift_constant_tensor_pass). Each stage is snapshotted before the next runs,
because several Cortex-M passes edit their input graph in place.
"""
from __future__ import annotations

import copy
import time
from dataclasses import replace
import traceback
from typing import Any, Callable, Generator, Iterator

from backend_core.common.errors import BadInputError, Cancelled, StageFailedError
from backend_core.stages.models.calibration import calibration_set
from backend_core.stages.models.loaded import LoadedModel
from backend_core.common.snapshot.capture import capture
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.common.cpus import normalise_target, target_config
from backend_core.stages.pipeline.failure import capture_failure, exception_chain
from backend_core.stages.pipeline.logs import StageLog, capture_logs
from backend_core.stages.pipeline.export_guards import full_stack_traces, module_attributes_kept
from backend_core.stages.pipeline.passes import host_runnable, pass_list, run_pass, stage_names
from backend_core.stages.pipeline.calibration_memo import CalibrationMemo
from backend_core.stages.pipeline.quantize import QuantizerDecisions, quantize
from backend_core.stages.pipeline.stages import PipelineOptions, Stage

STAGE_EXPORT = "float export"
STAGE_QUANTIZED = "quantized"
STAGE_EDGE = "edge"
STAGE_FINAL = "final"


def planned_stage_names(flow: str) -> list[str]:
    """Every stage name in order, for progress bars (imports ExecuTorch)."""
    return [STAGE_EXPORT, STAGE_QUANTIZED, STAGE_EDGE, *stage_names(pass_list(flow)), STAGE_FINAL]


def _root_cause(exc: BaseException) -> BaseException:
    return exception_chain(exc)[-1]


def to_layout(inputs: tuple, channels_last: bool = False, like: tuple | None = None) -> tuple:
    """The inputs as the pipeline feeds them: exactly as given, unless `channels_last` (an explicit
    option the report states) turns 4-D tensors channels-last. `like` (the example inputs) gives
    samples made elsewhere (random, from a folder) the example's memory format, so calibration
    and numerics see the layout the model was exported with."""
    import torch

    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.dim() == 4:
            ref = like[i] if like is not None and i < len(like) else None
            want_cl = channels_last or (isinstance(ref, torch.Tensor) and _is_channels_last(ref))
            if want_cl:
                # .to() and not .contiguous(): a 1-channel tensor passes both contiguity checks while
                # keeping NCHW strides, and the legacy conv checker reads the strides.
                x = x.to(memory_format=torch.channels_last)
        out.append(x)
    return tuple(out)


def _is_channels_last(t: Any) -> bool:
    return t.dim() == 4 and list(t.dim_order()) == [0, 2, 3, 1]


def channels_last_copy(module: Any) -> Any:
    """A copy of `module` with its 4-D parameters and buffers channels-last (the --channels-last
    option). A copy, so the user's module is never changed, and 4-D only: `module.to(memory_format=
    torch.channels_last)` raises on the 5-D weight of a Conv3d."""
    import torch

    m = copy.deepcopy(module)
    return m._apply(lambda t: t.to(memory_format=torch.channels_last) if t.dim() == 4 else t)


class LoweringPipeline:
    """Holds the live state of one lowering; iterate `run()` to advance stage by stage."""

    def __init__(self, model: LoadedModel, options: PipelineOptions,
                 on_status: Callable[[str], None] | None = None, *, keep_edge_program: bool = True,
                 float_rewrite: Callable[[Any], Any] | None = None,
                 quarantine: dict[str, dict[str, Any]] | None = None,
                 calibration_memo: CalibrationMemo | None = None) -> None:
        """`keep_edge_program` keeps a private copy of the edge program (passes mutate the live
        one) for reference runs; callers that only need snapshots skip the copy's cost.
        `float_rewrite(ep) -> (edited copy, renames)` edits the float export (backend_core.stages.fallback.
        verify uses it to try a suggested change); None for a normal lowering.
        `quarantine` ({node name at quantisation time: why}) leaves those ops unquantized
        (--keep-going after a pass failed on them); `calibration_memo` carries an earlier round's calibration
        (--keep-going: a round that only quarantines more ops does not calibrate again)."""
        self.quarantine = dict(quarantine or {})
        self.calibration_memo = calibration_memo
        self.keep_edge_program = keep_edge_program
        self.float_rewrite = float_rewrite
        self.renames: dict[str, str] = {}          # {new node name: old} made by float_rewrite
        if options.flow not in ("legacy", "explicit"):
            raise BadInputError(f"Unknown flow {options.flow!r}.", "Use --flow legacy or --flow explicit.")
        if options.activations not in ("int8", "int16"):
            raise BadInputError(f"Unknown activation type {options.activations!r}.",
                                "Use --activations int8 or --activations int16.")
        self.model = model
        self.options = replace(options, target=normalise_target(options.target))
        self.snapshots: list[GraphSnapshot] = []
        self.verdicts = QuantizerDecisions()
        self.quantized_module: Any = None
        self.example_inputs: tuple = ()
        self.final_program: Any = None
        self.edge_program: Any = None
        self.say: Callable[[str], None] = on_status or (lambda _t: None)
        self.rewritten: dict[str, str] = {}       # --rewrite rnn-cells: {module: "rewritten" | why not}

    def _rewritten_module(self) -> Any:
        """The module to export: the user's, or a copy with the opt-in --rewrite edits (never the user's own)."""
        if not self.options.rewrites:
            return self.model.module
        from backend_core.stages.fallback.rnn_cells import NAME, rnn_cells_copy

        unknown = [r for r in self.options.rewrites if r != NAME]
        if unknown:
            raise BadInputError(f"Unknown rewrite {unknown[0]!r}.", f"Use --rewrite {NAME}.")
        if self.model.exported is not None:
            raise BadInputError("--rewrite rnn-cells rewrites the model's modules; a saved .pt2 program has none.",
                                "Give the model as a zoo name or a Python file.")
        module, done = rnn_cells_copy(self.model.module)
        self.rewritten = done
        for name, what in done.items():
            self.say(f"--rewrite {NAME}: `{name}` {what}")
        if not done:
            self.say(f"--rewrite {NAME}: the model has no nn.LSTM / nn.GRU; nothing rewritten")
        return module

    # -- the generator -------------------------------------------------------------------
    def run(self) -> Iterator[Stage]:
        """Every stage in order: float export, PT2E quantization, edge, one per Cortex-M pass, final. A
        failing stage raises StageFailedError with the user's line and its cause (the stages before it
        were yielded); a Cancelled from a status callback is the user's cancel, not a failure."""
        import torch

        from backend_core.stages.pipeline.int_conv import install_int_dilated_conv

        install_int_dilated_conv()      # every host run of the lowered program (references, numerics)
        opts = self.options
        given = self.model.inputs_for(opts.flow)
        inputs = to_layout(given, opts.channels_last)
        self.example_inputs = inputs
        calib = [to_layout(s, opts.channels_last, like=inputs) for s in
                 calibration_set(given, opts.calib, self.model.calibration_inputs)]
        torch.manual_seed(opts.seed)

        t0 = time.perf_counter()
        ep, warnings = self._float_export(inputs)
        yield self._stage(ep, STAGE_EXPORT, "export", t0, warnings)
        t0 = time.perf_counter()
        converted, warnings = self._quantize(ep, inputs, calib)
        yield self._stage(converted, STAGE_QUANTIZED, "quantize", t0, warnings)
        t0 = time.perf_counter()
        program, warnings = self._to_edge(converted, inputs)
        yield self._stage(program, STAGE_EDGE, "edge", t0, warnings)
        program = yield from self._passes(program)
        t0 = time.perf_counter()
        program, warnings = self._lift_constants(program)
        self.final_program = program
        yield self._stage(program, STAGE_FINAL, "final", t0, warnings, final=True)

    def _float_export(self, inputs: Any) -> tuple[Any, list[str]]:
        """1. The model as given (the legacy flow's conv checker then decides per op; a layout fallback says
        so), or channels-last when the user asked for it; then the tool's own value-preserving edits."""
        import torch

        opts = self.options
        try:
            with capture_logs() as log, full_stack_traces(), module_attributes_kept(self.model.module):
                module = self._rewritten_module()
                if opts.channels_last:
                    ep = torch.export.export(channels_last_copy(module), inputs)
                elif self.model.exported is not None and module is self.model.module:
                    ep = self.model.exported
                else:
                    ep = torch.export.export(module, inputs)
        except Cancelled:       # the user's cancel (a status callback raised it): not a stage failure
            raise
        except Exception as e:
            raise _with_logs(self._export_error(e), log) from e
        warnings = log.warnings()
        if self.float_rewrite is not None:       # the tool's own edit: its failure is the tool's, by name
            try:
                with capture_logs() as log:
                    ep, self.renames = self.float_rewrite(ep)
            except Cancelled:
                raise
            except Exception as e:
                raise _with_logs(self._rewrite_error(e), log) from e
            warnings = log.warnings()
        return ep, warnings

    def _quantize(self, ep: Any, inputs: Any, calib: list[Any]) -> tuple[Any, list[str]]:
        """2. PT2E quantization with the Cortex-M quantizer."""
        opts = self.options
        try:
            with capture_logs() as log:
                gm = ep.module(check_guards=False)
                converted, self.verdicts = quantize(gm, inputs, calib, opts.flow, self.say,
                                                    activations=opts.activations,
                                                    quarantine=self.quarantine,
                                                    memo=self.calibration_memo)
                self.quantized_module = converted
        except Cancelled:
            raise
        except Exception as e:
            raise _with_logs(self._quantize_error(e), log) from e
        return converted, log.warnings()

    def _to_edge(self, converted: Any, inputs: Any) -> tuple[Any, list[str]]:
        """3. The quantized model exported again and lowered to the edge dialect."""
        import torch

        self.say("exporting the quantized model and lowering to edge")
        try:
            with capture_logs() as log:
                from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
                from executorch.exir import to_edge

                qep = torch.export.export(converted, inputs)
                edge = to_edge(qep, compile_config=cortex_m_edge_compile_config())
                program = edge.exported_program()
                if self.keep_edge_program:
                    self.edge_program = copy.deepcopy(program)
        except Cancelled:
            raise
        except Exception as e:
            raise _with_logs(self._stage_error(STAGE_EDGE, e), log) from e
        return program, log.warnings()

    def _passes(self, program: Any) -> Generator[Stage, None, Any]:
        """4. One stage per Cortex-M pass; returns the last pass's program."""
        cfg = target_config(self.options.target)
        passes = pass_list(self.options.flow)
        names = stage_names(passes)
        for pass_cls, name, can_run in zip(passes, names, host_runnable(names)):
            t0 = time.perf_counter()
            self.say(f"running {name}")
            try:
                with capture_logs() as log:
                    new_program = run_pass(pass_cls, program, cfg)
            except Cancelled:
                raise
            except Exception as e:
                raise _with_logs(self._pass_error(name, e), log) from e
            changed = new_program is not program
            program = new_program
            yield self._stage(program, name, "pass", t0, log.warnings(), changed=changed, runnable=can_run)
        return program

    def _lift_constants(self, program: Any) -> tuple[Any, list[str]]:
        """5. Final: constants introduced by passes lifted to buffers."""
        try:
            from executorch.exir.program._program import lift_constant_tensor_pass

            with capture_logs() as log:
                program = lift_constant_tensor_pass(program)
        except Cancelled:
            raise
        except Exception as e:
            raise _with_logs(self._stage_error(STAGE_FINAL, e), log) from e
        return program, log.warnings()

    # -- helpers -------------------------------------------------------------------------
    def _stage(self, program: Any, name: str, kind: str, t0: float, warnings: list[str], *,
               changed: bool = True, runnable: bool = True, final: bool = False) -> Stage:
        seconds = time.perf_counter() - t0
        if not changed and not final and self.snapshots:
            # the pass returned its input object: the graph is the previous stage's (snapshots are frozen)
            snap = replace(self.snapshots[-1], stage=name, index=len(self.snapshots), kind=kind, seconds=seconds,
                           log=tuple(warnings), changed=False, runnable_on_host=runnable, extra={})
        else:
            snap = capture(program, name, len(self.snapshots), kind, final=final, seconds=seconds,
                           log=warnings, changed=changed, runnable_on_host=runnable)
        self.snapshots.append(snap)
        return Stage(name, snap.index, snap, program, seconds, warnings)

    def _export_error(self, e: BaseException) -> StageFailedError:
        text = f"{type(e).__name__}: {e}"
        hint = "torch.export could not trace the model."
        low = text.lower()
        if "data-dependent" in low or "guardondatadependent" in low or "control flow" in low:
            hint = ("The model has data-dependent control flow (an `if` or loop on tensor values). "
                    "Rewrite it with torch.where / torch.cond, or move the decision out of forward().")
        return StageFailedError(STAGE_EXPORT, f"Exporting the float model failed: {_first_lines(text)}",
                                hint, detail=traceback.format_exc())

    def _rewrite_error(self, e: BaseException) -> StageFailedError:
        """A --keep-going workaround (or a suggestion check) that failed on the export: the tool's bug, named."""
        name = getattr(e, "rewrite", None) or "a rewrite of the float export"
        root = _root_cause(e)
        return StageFailedError(
            STAGE_EXPORT, f"The tool's own rewrite '{name}' failed on the float export: {type(root).__name__}: "
            f"{_first_lines(str(root))}",
            "This is a failure of CortexM Lens's workaround, not of your model or of ExecuTorch: the export "
            "itself succeeded. Please report it (the traceback is shown with --verbose); lowering without "
            "--keep-going gives plain ExecuTorch's result.", detail=traceback.format_exc())

    def _pass_error(self, stage: str, e: BaseException) -> StageFailedError:
        """The stage error with the failing node's diagnosis (`.failure`, a dict): the op the user
        wrote, its operands, ExecuTorch's check, the cause (backend_core.stages.fallback.pass_failure)."""
        live = capture_failure(stage, e)
        err = self._stage_error(stage, e, node=live.node)
        try:
            from backend_core.stages.fallback.pass_failure import diagnose

            err.failure = diagnose(live, list(self.snapshots)).to_dict()    # type: ignore[attr-defined]
        except Exception as d:  # noqa: BLE001 - a diagnosis must never hide the failure itself
            err.failure = {**live.to_dict(), "checked": [f"diagnosis failed: {type(d).__name__}: {d}"]}  # type: ignore[attr-defined]
        return err

    def _quantize_error(self, e: BaseException) -> StageFailedError:
        """prepare_pt2e / convert_pt2e failed: the node torchao was reading, in the user's terms, with the cause
        and workaround where a rule establishes them (backend_core.stages.fallback.quantizer_failure)."""
        live = capture_failure(STAGE_QUANTIZED, e)
        err = self._stage_error(STAGE_QUANTIZED, e, node=live.node, inside="torchao's PT2E quantisation "
                                "(prepare_pt2e / convert_pt2e)")
        try:
            from backend_core.stages.fallback.quantizer_failure import diagnose_quantizer

            err.failure = diagnose_quantizer(live, list(self.snapshots)).to_dict()    # type: ignore[attr-defined]
        except Exception as d:  # noqa: BLE001 - a diagnosis must never hide the failure itself
            err.failure = {**live.to_dict(), "checked": [f"diagnosis failed: {type(d).__name__}: {d}"]}  # type: ignore[attr-defined]
        return err

    def _stage_error(self, stage: str, e: BaseException, node: str | None = None,
                     inside: str = "ExecuTorch") -> StageFailedError:
        where = f" on node {node}" if node else ""
        root = _root_cause(e)
        return StageFailedError(
            stage, f"Stage '{stage}' failed{where}: {type(root).__name__}: {_first_lines(str(root))}",
            f"This is raised inside {inside}; the traceback (--verbose) shows its own frames. "
            "Earlier stages are still available.", node=node, detail=traceback.format_exc())


def _with_logs(err: StageFailedError, log: StageLog) -> StageFailedError:
    """The stage error with torch's own logged exceptions of that stage appended to its detail (shown
    with --verbose, kept in the JSON), since they were kept off stderr."""
    logged = log.logged_errors()
    if logged:
        err.detail = f"{err.detail}\n--- logged by torch during the stage ---\n{logged}".strip()
    return err


def _first_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[:n]) + ("\n…" if len(lines) > n else "")


