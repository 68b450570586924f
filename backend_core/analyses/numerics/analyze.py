"""The numerics run: every runnable stage on every sample, per-layer metrics, per-pass checks.

Samples are processed one at a time through all stages (float export → PT2E fake-quant → edge →
runnable passes → final), so only one sample's activations are alive at once, the cancel check
sits between stages, and each stage is compared with the previous runnable one while both
values are at hand. Metrics are pooled over samples by streaming accumulators.

Per layer of the final graph:
  vs_fake_quant        lowered output vs the PT2E fake-quant value (both on the same int8 grid)
  vs_float             lowered output vs the float model (total quantization + lowering error)
  fake_quant_vs_float  the quantization error alone
  local                the layer's lowered kernel run on the *fake-quant* inputs vs fake-quant:
                       the error this layer adds by itself. Cumulative errors grow with depth and
                       a broken layer spoils every later one; the local error points at the one.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from backend_core.common.errors import Cancelled, CmlensError
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.analyses.numerics.align import LayerPlan, build_plan
from backend_core.analyses.numerics.capture import Reuse, StageProgram, run_capture
from backend_core.analyses.numerics.compare import LayerValue, stage_checks
from backend_core.analyses.numerics.final_run import FinalRun
from backend_core.analyses.numerics.pooling import MetricPool
from backend_core.analyses.numerics.results import NumericsResult, StageCheck
from backend_core.analyses.numerics.tensors import first_tensor

Progress = Callable[[int, int, str], None]     # (done, total, text)
CancelCheck = Callable[[], bool]               # True once the user asked to cancel


@dataclass(frozen=True)
class RunLabels:
    """What the result says it compared: names only, nothing here changes the computation."""

    model: str = ""
    target: str = ""
    flow: str = ""
    inputs: str = ""


@dataclass(frozen=True)
class Sampling:
    """How much of each sample is kept: `sample_size` values per layer for the window's scatter plots;
    the local (isolated) error reruns every layer's kernel, about one more forward pass per sample, so
    `local_samples` limits it to the first K samples (None: all; an outlier sample can be what exposes a
    kernel, so all is the default)."""

    sample_size: int = 400
    local_samples: int | None = None


class _Stages:
    """The kept stages of one lowering, run one sample at a time: each stage reuses the previous runnable
    stage's node values where an op and its arguments are unchanged."""

    def __init__(self, stages: list[StageProgram], final_snapshot: GraphSnapshot) -> None:
        self.stages = stages
        self.final = stages[-1]
        self.plans = build_plan(stages, final_snapshot)
        self.by_node = {lp.node: lp for lp in self.plans}
        self.fq_stage = next((s for s in stages if s.kind == "quantize"), None)
        self.float_stage = next((s for s in stages if s.kind == "export"), None)
        self.chain = [s for s in stages if s.kind != "export"]           # compared pairwise
        self.fnodes = {n.name: n for n in self.final.graph_module.graph.nodes}
        self.reuses = {cur.name: (prev.name, Reuse(prev.program)) for prev, cur in zip(self.chain, self.chain[1:])}
        self.in_chain = {s.name for s in self.chain}
        self.captures = {s.name: {lp.points[s.name].node for lp in self.plans if s.name in lp.points}
                         for s in stages if s is not self.final}
        self.seconds = {s.name: 0.0 for s in stages}

    def through(self, sample: tuple, number: int, local: bool, before: Callable[[StageProgram], None]
                ) -> tuple[dict[str, dict[str, LayerValue]], dict[str, list[Any]], dict[str, dict[str, Any]], FinalRun]:
        """Run sample `number` (1-based, for messages) through every stage, calling `before(stage)` first
        (progress, cancel): (layer values per stage, outputs per stage, raw captured values per stage,
        the final stage's run)."""
        values: dict[str, dict[str, LayerValue]] = {}  # stage -> layer -> value at its point
        raw: dict[str, dict[str, Any]] = {}            # stage -> point node -> captured value
        outputs: dict[str, list[Any]] = {}
        envs: dict[str, dict[str, Any]] = {}           # stage -> every node's value, by name
        fr: FinalRun | None = None
        for st in self.stages:
            before(st)
            t0 = time.perf_counter()
            rec, fr = self._run_stage(st, sample, number, raw, envs, local, fr)
            self.seconds[st.name] += time.perf_counter() - t0
            outputs[st.name] = [first_tensor(o) for o in rec.outputs]
            values[st.name] = self._layer_values(st, raw[st.name])
        assert fr is not None
        return values, outputs, raw, fr

    def _run_stage(self, st: StageProgram, sample: tuple, number: int, raw: dict[str, dict[str, Any]],
                   envs: dict[str, dict[str, Any]], local: bool, fr: FinalRun | None) -> tuple[Any, FinalRun | None]:
        reuse = None
        if st.name in self.reuses:
            prev_name, reuse = self.reuses[st.name]
            reuse.prev_env = envs.pop(prev_name, {})
        try:
            if st is self.final:
                fr = FinalRun(st, self.plans, self.by_node, self.fnodes,
                              raw.get(self.fq_stage.name, {}) if self.fq_stage else {},
                              raw.get(self.float_stage.name, {}) if self.float_stage else {}, local=local)
                rec = fr.run(sample, reuse)
                raw[st.name] = rec.env
            else:
                rec = run_capture(st.program, sample, self.captures[st.name],
                                  keep_env=st.name in self.in_chain, reuse=reuse)
                raw[st.name] = rec.values
            envs[st.name] = rec.env
            if reuse is not None:
                reuse.prev_env = {}
        except Cancelled:
            raise
        except Exception as e:
            raise CmlensError(
                f"Running stage '{st.name}' on sample {number} failed: {type(e).__name__}: {str(e)[:300]}",
                "The stage's program does not run on the host with this input.") from e
        return rec, fr

    def _layer_values(self, st: StageProgram, raw: dict[str, Any]) -> dict[str, LayerValue]:
        vals: dict[str, LayerValue] = {}
        for lp in self.plans:
            p = lp.final_point if st is self.final else lp.points.get(st.name)
            v = raw.get(p.node) if p is not None else None
            if p is not None and v is not None:
                vals[lp.node] = LayerValue(v, p, tuple(_shape(lp, self.fnodes)))
        return vals


def analyze(stages: list[StageProgram], final_snapshot: GraphSnapshot, samples: list[tuple], *,
            snapshots: list[GraphSnapshot] | None = None, labels: RunLabels = RunLabels(),
            sampling: Sampling = Sampling(), lowered: Any = None, progress: Progress | None = None,
            is_cancelled: CancelCheck | None = None) -> NumericsResult:
    """Run `stages` (StageKeeper.stages; the last is the final program, or `lowered` if given,
    e.g. a deliberately corrupted copy) on `samples` and compare them layer by layer. Cumulative metrics
    and pass checks always use every sample."""
    t_start = time.perf_counter()
    if not samples:
        raise CmlensError("No input samples to run.", "Pass --inputs N or a folder of samples.")
    if not stages or stages[-1].kind != "final":
        raise CmlensError("The lowering did not reach the final stage; nothing to compare.")
    if lowered is not None:
        last = stages[-1]
        stages = stages[:-1] + [StageProgram(last.name, last.index, last.kind, lowered, last.passes)]
    run = _Stages(stages, final_snapshot)
    pool = MetricPool(run.plans, run.chain, sampling.sample_size)
    total, done = len(samples) * len(stages), 0
    reference_outputs: list[Any] = []               # the last sample's fake-quant (else lowered) outputs
    for si, sample in enumerate(samples):
        def before(st: StageProgram, si: int = si) -> None:
            nonlocal done
            if is_cancelled is not None and is_cancelled():
                raise Cancelled("Numerics run cancelled.")
            if progress is not None:
                progress(done, total, f"sample {si + 1}/{len(samples)}: {st.name}")
            done += 1
        local = sampling.local_samples is None or si < sampling.local_samples
        values, outputs, raw, fr = run.through(sample, si + 1, local, before)
        fq, fl = run.fq_stage, run.float_stage
        fqv = {k: v.f() for k, v in values.get(fq.name, {}).items()} if fq else {}
        flv = {k: v.f() for k, v in values.get(fl.name, {}).items()} if fl else {}
        pool.add_layers(si == 0, {k: v.f() for k, v in values[run.final.name].items()},
                        {**fqv, **fr.derived_fq}, {**flv, **fr.derived_float}, fr.isolated, raw[run.final.name])
        qo = outputs.get(fq.name, []) if fq else []
        pool.add_outputs(outputs[run.final.name], qo, outputs.get(fl.name, []) if fl else [])
        reference_outputs = qo or outputs[run.final.name]
        pool.add_neutrality(run.chain, values, outputs)
    if progress is not None:
        progress(total, total, "done")
    return NumericsResult(model=labels.model, target=labels.target, flow=labels.flow, inputs=labels.inputs,
                          n_inputs=len(samples), final_stage=run.final.name, layers=pool.layer_results(),
                          outputs=pool.output_results(), stages=_checks(run, pool, snapshots),
                          seconds=time.perf_counter() - t_start, notes=_notes(run.plans, reference_outputs))


def _checks(run: _Stages, pool: MetricPool, snapshots: list[GraphSnapshot] | None) -> list[StageCheck]:
    checks = stage_checks(run.stages, run.chain, pool.div, run.seconds, run.plans, snapshots)
    for c in checks:
        if c.stage in run.reuses:
            r = run.reuses[c.stage][1]
            if r.reused:
                c.note = (f"{r.reused} of {r.reused + r.executed} node runs reused from "
                          f"{run.reuses[c.stage][0]} (same op, identical argument values)")
    return checks


def _notes(plans: list[LayerPlan], reference_outputs: list[Any]) -> list[str]:
    from backend_core.stages.pipeline.reference_check import degenerate_reason   # issue 9: near-constants

    notes = []
    for i, ref in enumerate(reference_outputs):
        # 0.01: the default atol of a target run's bundle check (cmlens run --atol)
        why = degenerate_reason(ref.detach().double().numpy(), 0.01) if ref is not None else ""
        if why:
            notes.append(f"output {i}: {why}; these numerics compare near-constant outputs: use real weights "
                         "or calibration data")
    derived = [lp.node for lp in plans if lp.reference == "derived"]
    if derived:
        notes.append(f"{len(derived)} layer(s) have no debug handle of their own (created by a pass "
                     f"or part of a decomposition); their reference is the same op run on the "
                     f"references of their inputs: {', '.join(derived[:8])}"
                     f"{' …' if len(derived) > 8 else ''}")
    return notes


def _shape(lp: LayerPlan, fnodes: dict[str, Any]) -> tuple[int, ...]:
    if lp.snap.shape is not None:
        return tuple(lp.snap.shape)
    v = first_tensor(fnodes[lp.node].meta.get("val"))
    return tuple(v.shape) if v is not None else ()
