"""The three host models an evaluation runs, taken from a lowering that already happened (the job's
lower step with `keep_stages`): the float model, the PT2E fake-quant module and the final lowered
program, plus the runnable stages the per-layer numerics capture needs for a flipped sample.

Float and fake-quant run in batches where the module takes one (eager modules and PT2E modules
usually do); the lowered program's guards fix the batch at 1, so it runs sample by sample through
ExecuTorch's Python reference kernels of the cortex_m ops — what limits its host speed."""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.analyses.numerics.capture import StageProgram
from backend_core.common.snapshot.model import GraphSnapshot

BATCH = 64


@dataclass
class EvalPrograms:
    model: str
    target: str
    flow: str
    example_inputs: tuple
    float_model: Any                     # eager module (or the float program's module for a .pt2)
    fake_quant: Any                      # PT2E converted GraphModule
    lowered: Any                         # the final edge ExportedProgram (cortex_m ops)
    stages: list[StageProgram] = field(default_factory=list)   # float export, quantized, edge, final
    final_snapshot: GraphSnapshot | None = None
    calibration: list[tuple] = field(default_factory=list)     # the samples the lowering calibrated on
    loaded: Any = None                   # the LoadedModel (its get_eval_data / preprocess)

    @classmethod
    def from_lowering(cls, lowering: Any) -> "EvalPrograms":
        """From a finished lowering that kept its host-runnable stages (lower(keep_stages=True): the
        job's lower step does when the job wants `evaluate`). Nothing is lowered again."""
        from backend_core.stages.models.calibration import calibration_set
        from backend_core.stages.pipeline.stepped import channels_last_copy, to_layout

        stages = getattr(lowering, "stage_programs", None)
        m = getattr(lowering, "loaded_model", None)
        if lowering is None or lowering.status != "done" or not stages or m is None or stages[-1].kind != "final":
            raise CmlensError("The lowering kept no host-runnable stages to evaluate (it came from the cache, read "
                              "a ready program, or did not finish).",
                              "Lower the model source with keep_stages=True in this process (the job's evaluate "
                              "step asks its lower step for it).")
        opts = lowering.options
        by_kind = {s.kind: s for s in stages}
        fq = by_kind.get("quantize")
        if fq is None or "export" not in by_kind:
            raise CmlensError("The lowering kept no float export or PT2E stage.", "Lower the model source again.")
        pipe = lowering.pipeline
        inputs = tuple(pipe.example_inputs) if pipe is not None and pipe.example_inputs else \
            to_layout(m.inputs_for(opts.flow), opts.channels_last)
        if m.exported is not None:
            float_model = m.exported.module(check_guards=False)
        else:
            float_model = channels_last_copy(m.module) if opts.channels_last else m.module
        # the per-sample numerics of a flip needs the float, PT2E, edge and final stages only (the passes
        # in between are checked by `cmlens numerics`; skipping them keeps a flip's trace ~0.1 s)
        numerics = [s for s in stages if s.kind in ("export", "quantize", "edge", "final")]
        calib = [to_layout(s, opts.channels_last, like=inputs)
                 for s in calibration_set(m.inputs_for(opts.flow), opts.calib, m.calibration_inputs)]
        return cls(m.name, opts.target, opts.flow, inputs, float_model, fq.program, stages[-1].program,
                   numerics, lowering.snapshots[-1], calib, m)


def outputs_of(y: Any) -> list[Any]:
    """A model's result as a list of tensors (one per output)."""
    if isinstance(y, (list, tuple)):
        out: list[Any] = []
        for v in y:
            out.extend(outputs_of(v))
        return out
    if isinstance(y, dict):
        return outputs_of(list(y.values()))
    return [y] if hasattr(y, "dtype") else []


def run_all(fn: Callable[..., Any], samples: list[tuple], *, batch: bool,
            is_cancelled: Callable[[], bool] | None = None) -> tuple[list[list[Any]], float, bool]:
    """(per-sample outputs, seconds, batched?) of `fn` on every sample. Batches of BATCH when `batch`
    and the module takes them (every input has batch 1 and the outputs come back split evenly);
    otherwise one sample at a time."""
    import torch

    t0 = time.perf_counter()
    with torch.no_grad(), one_thread():
        if batch and samples and all(t.shape[0] == 1 for t in samples[0] if hasattr(t, "shape") and t.dim()):
            try:
                out = _batched(fn, samples, is_cancelled)
                return out, time.perf_counter() - t0, True
            except CmlensError:
                raise
            except Exception:  # noqa: BLE001 - shapes fixed at export: run sample by sample below
                t0 = time.perf_counter()
        out = []
        for s in samples:
            _stop(is_cancelled)
            out.append([o.detach() for o in outputs_of(fn(*s))])
    return out, time.perf_counter() - t0, False


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Small models' runs on one torch thread (sample by sample, or in batches of 64 small images):
    intra-op threads only add synchronisation there, and on a busy machine a lot of it (digits_cnn's lowered program on this
    2-core machine under load: 124 samples/s with 1 thread, 15-21 with 2)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _batched(fn: Callable[..., Any], samples: list[tuple], is_cancelled: Callable[[], bool] | None) -> list[list[Any]]:
    import torch

    res: list[list[Any]] = []
    for i in range(0, len(samples), BATCH):
        _stop(is_cancelled)
        chunk = samples[i:i + BATCH]
        args = [torch.cat([s[j] for s in chunk]) for j in range(len(chunk[0]))]
        args = [a.contiguous(memory_format=torch.channels_last) if a.dim() == 4 and _cl(chunk[0][j]) else a
                for j, a in enumerate(args)]
        outs = outputs_of(fn(*args))
        if not outs or any(o.shape[0] != len(chunk) for o in outs):
            raise ValueError("outputs not batched")
        res.extend([[o[k:k + 1].detach() for o in outs] for k in range(len(chunk))])
    return res


def _cl(t: Any) -> bool:
    return t.dim() == 4 and list(t.dim_order()) == [0, 2, 3, 1]


def _stop(is_cancelled: Callable[[], bool] | None) -> None:
    if is_cancelled is not None and is_cancelled():
        from backend_core.common.errors import Cancelled

        raise Cancelled("Evaluation cancelled.")


def lowered_callable(program: Any) -> Callable[..., Any]:
    """The final program as a callable (FACTS.md "Running": final_ep.module()(x))."""
    try:
        return program.module()
    except Exception as e:
        raise BadInputError(f"The lowered program cannot run on the host: {type(e).__name__}: {str(e)[:200]}",
                            "Lowering artefacts (.pte/.bpte) cannot be evaluated; give the model source.") from e
