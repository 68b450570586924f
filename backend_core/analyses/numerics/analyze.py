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
from typing import Any, Callable

from backend_core.common.errors import Cancelled, CmlensError
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.analyses.numerics.align import LayerPlan, build_plan
from backend_core.analyses.numerics.capture import Reuse, StageProgram, run_capture
from backend_core.analyses.numerics.compare import Divergence, LayerValue, layer_result, stage_checks
from backend_core.analyses.numerics.final_run import FinalRun
from backend_core.analyses.numerics.metrics import ErrorAccumulator, FloatHistogram, IntHistogram, top1
from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ,
                      NumericsResult, OutputResult)
from backend_core.analyses.numerics.tensors import align, first_tensor, sample_indices

Progress = Callable[[int, int, str], None]     # (done, total, text)
ShouldStop = Callable[[], bool]


def analyze(stages: list[StageProgram], final_snapshot: GraphSnapshot, samples: list[tuple], *,
            snapshots: list[GraphSnapshot] | None = None, model: str = "", target: str = "",
            flow: str = "", inputs: str = "", lowered: Any = None, sample_size: int = 400,
            local_samples: int | None = None, progress: Progress | None = None, should_stop: ShouldStop | None = None
            ) -> NumericsResult:
    """Run `stages` (StageKeeper.stages; the last is the final program, or `lowered` if given,
    e.g. a deliberately corrupted copy) on `samples` and compare them layer by layer.

    The local (isolated) error reruns every layer's kernel once more, which costs about one more
    forward pass per sample; `local_samples` limits it to the first K samples (None: all; an
    outlier sample can be what exposes a kernel, so all is the default). Cumulative metrics and pass checks always use every
    sample."""
    import torch

    t_start = time.perf_counter()
    if not samples:
        raise CmlensError("No input samples to run.", "Pass --inputs N or a folder of samples.")
    if not stages or stages[-1].kind != "final":
        raise CmlensError("The lowering did not reach the final stage; nothing to compare.")
    if lowered is not None:
        last = stages[-1]
        stages = stages[:-1] + [StageProgram(last.name, last.index, last.kind, lowered, last.passes)]
    final = stages[-1]
    plans = build_plan(stages, final_snapshot)
    by_node = {lp.node: lp for lp in plans}
    fq_stage = next((s for s in stages if s.kind == "quantize"), None)
    float_stage = next((s for s in stages if s.kind == "export"), None)
    chain = [s for s in stages if s.kind != "export"]           # compared pairwise
    fnodes = {n.name: n for n in final.graph_module.graph.nodes}

    accs: dict[str, dict[str, ErrorAccumulator]] = {p: {} for p in
                                                    (PAIR_LOCAL, PAIR_LOWERED_VS_FQ,
                                                     PAIR_LOWERED_VS_FLOAT, PAIR_FQ_VS_FLOAT)}
    for lp in plans:
        sc = lp.qparam.scale if (lp.is_int and lp.qparam) else None
        for p in accs:
            accs[p][lp.node] = ErrorAccumulator(sc)
    ihist = {lp.node: IntHistogram(lp.qparam.qmin, lp.qparam.qmax)
             for lp in plans if lp.is_int and lp.qparam}
    fhist = {lp.node: FloatHistogram() for lp in plans}
    samples_out: dict[str, dict[str, list[float]]] = {lp.node: {} for lp in plans}
    out_accs: list[dict[str, ErrorAccumulator]] = []
    top1_hits: list[dict[str, int]] = []
    top1_n: list[int] = []
    out_shapes: list[Any] = []
    div = {s.name: Divergence() for s in chain[1:]}
    seconds = {s.name: 0.0 for s in stages}

    reuses = {cur.name: (prev.name, Reuse(prev.program)) for prev, cur in zip(chain, chain[1:])}
    in_chain = {s.name for s in chain}
    captures = {s.name: {lp.points[s.name].node for lp in plans if s.name in lp.points}
                for s in stages if s is not final}
    total = len(samples) * len(stages)
    done = 0
    reference_outputs: list[Any] = []               # the last sample's fake-quant (else lowered) outputs
    for si, sample in enumerate(samples):
        values: dict[str, dict[str, Any]] = {}      # stage -> layer -> dequantized, final shape
        raw: dict[str, dict[str, Any]] = {}         # stage -> point node -> captured value
        outputs: dict[str, list[Any]] = {}
        envs: dict[str, dict[str, Any]] = {}        # stage -> every node's value, by name
        for st in stages:
            if should_stop is not None and should_stop():
                raise Cancelled("Numerics run cancelled.")
            if progress is not None:
                progress(done, total, f"sample {si + 1}/{len(samples)}: {st.name}")
            t0 = time.perf_counter()
            reuse = None
            if st.name in reuses:
                prev_name, reuse = reuses[st.name]
                reuse.prev_env = envs.pop(prev_name, {})
            try:
                if st is final:
                    fr = FinalRun(st, plans, by_node, fnodes, raw.get(fq_stage.name, {}) if fq_stage
                                   else {}, raw.get(float_stage.name, {}) if float_stage else {},
                                   local=local_samples is None or si < local_samples)
                    rec = fr.run(sample, reuse)
                    raw[st.name] = rec.env
                else:
                    rec = run_capture(st.program, sample, captures[st.name],
                                      keep_env=st.name in in_chain, reuse=reuse)
                    raw[st.name] = rec.values
                envs[st.name] = rec.env
                if reuse is not None:
                    reuse.prev_env = {}
            except Cancelled:
                raise
            except Exception as e:
                raise CmlensError(
                    f"Running stage '{st.name}' on sample {si + 1} failed: {type(e).__name__}: "
                    f"{str(e)[:300]}",
                    "The stage's program does not run on the host with this input.") from e
            seconds[st.name] += time.perf_counter() - t0
            outputs[st.name] = [first_tensor(o) for o in rec.outputs]
            vals: dict[str, Any] = {}
            for lp in plans:
                pt = lp.final_point if st is final else lp.points.get(st.name)
                if pt is None:
                    continue
                v = raw[st.name].get(pt.node)
                if v is None:
                    continue
                vals[lp.node] = LayerValue(v, pt, tuple(_shape(lp, fnodes)))
            values[st.name] = vals
            done += 1

        # -- per-layer metrics ---------------------------------------------------------
        low = {k: v.f() for k, v in values[final.name].items()}
        fqv = {k: v.f() for k, v in values.get(fq_stage.name, {}).items()} if fq_stage else {}
        flv = {k: v.f() for k, v in values.get(float_stage.name, {}).items()} if float_stage else {}
        fqv = {**fqv, **fr.derived_fq}
        flv = {**flv, **fr.derived_float}
        for lp in plans:
            n = lp.node
            lv, qv, fv = low.get(n), fqv.get(n), flv.get(n)
            if lv is not None and qv is not None:
                accs[PAIR_LOWERED_VS_FQ][n].add(qv, lv)
            if lv is not None and fv is not None:
                accs[PAIR_LOWERED_VS_FLOAT][n].add(fv, lv)
            if qv is not None and fv is not None:
                accs[PAIR_FQ_VS_FLOAT][n].add(fv, qv)
            iso = fr.isolated.get(n)
            if iso is not None and qv is not None:
                accs[PAIR_LOCAL][n].add(qv, iso)
            if n in ihist:
                ihist[n].add(first_tensor(raw[final.name][n]))
            if fv is not None:
                fhist[n].add(fv)
            if si == 0 and lv is not None:
                idx = sample_indices(lv.numel(), sample_size)
                samples_out[n]["lowered"] = _pick(lv, idx)
                if qv is not None:
                    samples_out[n]["fake_quant"] = _pick(qv, idx)
                if fv is not None:
                    samples_out[n]["float"] = _pick(fv, idx)

        # -- model outputs ---------------------------------------------------------------
        lo = outputs[final.name]
        qo = outputs.get(fq_stage.name, []) if fq_stage else []
        fo = outputs.get(float_stage.name, []) if float_stage else []
        reference_outputs = qo or lo
        while len(out_accs) < len(lo):
            out_accs.append({p: ErrorAccumulator() for p in
                             (PAIR_LOWERED_VS_FQ, PAIR_LOWERED_VS_FLOAT, PAIR_FQ_VS_FLOAT)})
            top1_hits.append({PAIR_LOWERED_VS_FQ: 0, PAIR_LOWERED_VS_FLOAT: 0, PAIR_FQ_VS_FLOAT: 0})
            top1_n.append(0)
            out_shapes.append(None)
        for i, l_out in enumerate(lo):
            if l_out is None:
                continue
            out_shapes[i] = tuple(l_out.shape)
            q_out = qo[i] if i < len(qo) else None
            f_out = fo[i] if i < len(fo) else None
            pairs = ((PAIR_LOWERED_VS_FQ, q_out, l_out), (PAIR_LOWERED_VS_FLOAT, f_out, l_out),
                     (PAIR_FQ_VS_FLOAT, f_out, q_out))
            classify = top1(l_out) is not None
            if classify:
                top1_n[i] += 1
            for p, ref, test in pairs:
                if ref is None or test is None or not ref.is_floating_point():
                    continue
                r = align(ref.float(), tuple(test.shape))
                if r is None:
                    continue
                out_accs[i][p].add(r, test.float())
                if classify and top1(r) == top1(test.float()):
                    top1_hits[i][p] += 1

        # -- per-pass neutrality -------------------------------------------------------------
        for prev, cur in zip(chain, chain[1:]):
            d = div[cur.name]
            d.compared += 1
            a, b = values[prev.name], values[cur.name]
            for lp in plans:
                ra, rb = a.get(lp.node), b.get(lp.node)
                if ra is None or rb is None or lp.reference != "mapped" or ra.same(rb):
                    continue
                va, vb = ra.f(), rb.f()
                if va is None or vb is None:
                    continue
                if not torch.equal(va, vb):
                    diff = float((va.double() - vb.double()).abs().max())
                    d.differs[lp.node] = max(d.differs.get(lp.node, 0.0), diff)
                    if lp.is_int and lp.qparam and lp.qparam.scale > 0:
                        d.lsb[lp.node] = max(d.lsb.get(lp.node, 0.0), diff / lp.qparam.scale)
            oa, ob = outputs[prev.name], outputs[cur.name]
            if len(oa) != len(ob) or any(x is None or y is None or x.shape != y.shape or
                                         not torch.equal(x, y) for x, y in zip(oa, ob)):
                d.outputs_identical = False

    if progress is not None:
        progress(total, total, "done")

    layers = [layer_result(lp, accs, ihist, fhist, samples_out) for lp in plans]
    outs = []
    for i, acc in enumerate(out_accs):
        count = top1_n[i]
        outs.append(OutputResult(
            index=i, shape=out_shapes[i],
            vs_fake_quant=acc[PAIR_LOWERED_VS_FQ].result(),
            vs_float=acc[PAIR_LOWERED_VS_FLOAT].result(),
            fake_quant_vs_float=acc[PAIR_FQ_VS_FLOAT].result(),
            top1_vs_fake_quant=top1_hits[i][PAIR_LOWERED_VS_FQ] / count if count else None,
            top1_vs_float=top1_hits[i][PAIR_LOWERED_VS_FLOAT] / count if count else None,
            top1_fake_quant_vs_float=top1_hits[i][PAIR_FQ_VS_FLOAT] / count if count else None))
    checks = stage_checks(stages, chain, div, seconds, plans, snapshots)
    for c in checks:
        if c.stage in reuses:
            r = reuses[c.stage][1]
            if r.reused:
                c.note = (f"{r.reused} of {r.reused + r.executed} node runs reused from "
                          f"{reuses[c.stage][0]} (same op, identical argument values)")
    notes = []
    from backend_core.stages.pipeline.reference_check import degenerate_reason   # issue 9: a comparison of near-constants

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
    return NumericsResult(model=model, target=target, flow=flow, inputs=inputs,
                          n_inputs=len(samples), final_stage=final.name, layers=layers,
                          outputs=outs, stages=checks, seconds=time.perf_counter() - t_start,
                          notes=notes)


def _shape(lp: LayerPlan, fnodes: dict[str, Any]) -> tuple[int, ...]:
    if lp.snap.shape is not None:
        return tuple(lp.snap.shape)
    v = first_tensor(fnodes[lp.node].meta.get("val"))
    return tuple(v.shape) if v is not None else ()


def _pick(t: Any, idx: Any) -> list[float]:
    flat = t.reshape(-1)
    return [float(x) for x in flat[idx].tolist()]
