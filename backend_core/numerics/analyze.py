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
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import Cancelled, CmlensError
from ..snapshot.model import GraphSnapshot
from .align import LayerPlan, Point, build_plan, is_alloc, is_getitem
from .capture import Reuse, StageProgram, run_capture
from .metrics import ErrorAccumulator, FloatHistogram, IntHistogram, top1
from .results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ,
                      LayerResult, NumericsResult, OutputResult, StageCheck)
from .tensors import align, align_like, dequant, first_tensor, sample_indices

Progress = Callable[[int, int, str], None]     # (done, total, text)
ShouldStop = Callable[[], bool]


@dataclass
class _Divergence:
    """Running comparison of one stage with the previous runnable stage."""

    differs: dict[str, float] = field(default_factory=dict)   # layer -> max abs diff
    lsb: dict[str, float] = field(default_factory=dict)
    outputs_identical: bool = True
    compared: int = 0
    seconds: float = 0.0


def analyze(stages: list[StageProgram], final_snapshot: GraphSnapshot, samples: list[tuple], *,
            snapshots: list[GraphSnapshot] | None = None, model: str = "", target: str = "",
            flow: str = "", inputs: str = "", lowered: Any = None, sample_size: int = 400,
            local_samples: int | None = None, progress: Progress | None = None, should_stop: ShouldStop | None = None
            ) -> NumericsResult:
    """Run `stages` (StageKeeper.stages; the last is the final program, or `lowered` if given,
    e.g. a deliberately corrupted copy) on `samples` and compare them layer by layer.

    The local (isolated) error reruns every layer's kernel once more, which costs about one more
    forward pass per sample; `local_samples` limits it to the first K samples (None: all; an
    outlier sample can be what exposes a kernel, so all is the default). Cumulative metrics and pass checks always use every sample."""
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
    div = {s.name: _Divergence() for s in chain[1:]}
    seconds = {s.name: 0.0 for s in stages}

    reuses = {cur.name: (prev.name, Reuse(prev.program)) for prev, cur in zip(chain, chain[1:])}
    in_chain = {s.name for s in chain}
    captures = {s.name: {lp.points[s.name].node for lp in plans if s.name in lp.points}
                for s in stages if s is not final}
    total = len(samples) * len(stages)
    done = 0
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
                    fr = _FinalRun(st, plans, by_node, fnodes, raw.get(fq_stage.name, {}) if fq_stage
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
            except Exception as e:  # noqa: BLE001
                raise CmlensError(
                    f"Running stage '{st.name}' on sample {si + 1} failed: {type(e).__name__}: "
                    f"{str(e)[:300]}",
                    "The stage's program does not run on the host with this input.") from e
            seconds[st.name] += time.perf_counter() - t0
            outputs[st.name] = [first_tensor(o) for o in rec.outputs]
            vals: dict[str, Any] = {}
            for lp in plans:
                p = lp.final_point if st is final else lp.points.get(st.name)
                if p is None:
                    continue
                v = raw[st.name].get(p.node)
                if v is None:
                    continue
                vals[lp.node] = _Val(v, p, tuple(_shape(lp, fnodes)))
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

    layers = [_layer_result(lp, accs, ihist, fhist, samples_out) for lp in plans]
    outs = []
    for i, acc in enumerate(out_accs):
        n = top1_n[i]
        outs.append(OutputResult(
            index=i, shape=out_shapes[i],
            vs_fake_quant=acc[PAIR_LOWERED_VS_FQ].result(),
            vs_float=acc[PAIR_LOWERED_VS_FLOAT].result(),
            fake_quant_vs_float=acc[PAIR_FQ_VS_FLOAT].result(),
            top1_vs_fake_quant=top1_hits[i][PAIR_LOWERED_VS_FQ] / n if n else None,
            top1_vs_float=top1_hits[i][PAIR_LOWERED_VS_FLOAT] / n if n else None,
            top1_fake_quant_vs_float=top1_hits[i][PAIR_FQ_VS_FLOAT] / n if n else None))
    checks = _stage_checks(stages, chain, div, seconds, plans, snapshots)
    for c in checks:
        if c.stage in reuses:
            r = reuses[c.stage][1]
            if r.reused:
                c.note = (f"{r.reused} of {r.reused + r.executed} node runs reused from "
                          f"{reuses[c.stage][0]} (same op, identical argument values)")
    notes = []
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


def _layer_result(lp: LayerPlan, accs: dict[str, dict[str, ErrorAccumulator]],
                  ihist: dict[str, IntHistogram], fhist: dict[str, FloatHistogram],
                  samples_out: dict[str, dict[str, list[float]]]) -> LayerResult:
    s, q = lp.snap, lp.qparam
    refs = {k: v.node for k, v in lp.points.items()}
    return LayerResult(
        node_id=lp.node, index=lp.index, target=s.target, kind=s.kind, module_path=s.module_path,
        debug_handle=s.debug_handle, shape=tuple(s.shape) if s.shape else None, dtype=s.dtype,
        scale=q.scale if (q and lp.is_int) else None,
        zero_point=q.zero_point if (q and lp.is_int) else None,
        qmin=q.qmin if (q and lp.is_int) else None, qmax=q.qmax if (q and lp.is_int) else None,
        reference=lp.reference,
        vs_fake_quant=accs[PAIR_LOWERED_VS_FQ][lp.node].result(),
        vs_float=accs[PAIR_LOWERED_VS_FLOAT][lp.node].result(),
        fake_quant_vs_float=accs[PAIR_FQ_VS_FLOAT][lp.node].result(),
        local=accs[PAIR_LOCAL][lp.node].result(),
        refs=refs, sample=samples_out[lp.node],
        int_hist=ihist[lp.node].result() if lp.node in ihist else None,
        float_hist=fhist[lp.node].result())


def _stage_checks(stages: list[StageProgram], chain: list[StageProgram],
                  div: dict[str, _Divergence], seconds: dict[str, float], plans: list[LayerPlan],
                  snapshots: list[GraphSnapshot] | None) -> list[StageCheck]:
    kept = {s.name: s for s in stages}
    order = [lp.node for lp in plans]
    prev_of = {cur.name: prev.name for prev, cur in zip(chain, chain[1:])}
    out: list[StageCheck] = []
    names = [s.stage for s in snapshots] if snapshots else [s.name for s in stages]
    for i, name in enumerate(names):
        snap = snapshots[i] if snapshots else None
        st = kept.get(name)
        if st is None:
            if snap is not None and not snap.runnable_on_host:
                out.append(StageCheck(name, i, None, "not_runnable",
                                      note="int8 tensors flow into float ATen kernels here; "
                                           "checked together with the next runnable stage"))
            else:
                out.append(StageCheck(name, i, None, "unchanged",
                                      note="the pass changed nothing: neutral by construction"))
            continue
        if st.kind == "export":
            out.append(StageCheck(name, i, None, "reference", seconds=seconds[name],
                                  note="float reference"))
            continue
        if name not in div:
            out.append(StageCheck(name, i, None, "reference", seconds=seconds[name],
                                  note="PT2E fake-quant reference"))
            continue
        d = div[name]
        first = next((n for n in order if n in d.differs), None)
        neutral = not d.differs and d.outputs_identical
        out.append(StageCheck(
            name, i, prev_of[name], "neutral" if neutral else "diverged", first_diverging=first,
            diverging_layers=len(d.differs), max_abs_diff=max(d.differs.values(), default=0.0),
            max_lsb_diff=max(d.lsb.values()) if d.lsb else None,
            outputs_identical=d.outputs_identical, passes=st.passes, seconds=seconds[name]))
    return out


class _Val:
    """A captured value at a layer's tensor point, dequantized only when a metric needs it
    (stage-to-stage checks compare the integers directly when both sides share qparams)."""

    __slots__ = ("raw", "point", "shape", "_f")

    def __init__(self, raw: Any, point: Point, shape: tuple[int, ...]) -> None:
        self.raw, self.point, self.shape, self._f = first_tensor(raw), point, shape, None

    def f(self) -> Any:
        if self._f is None and self.raw is not None:
            self._f = align(dequant(self.raw, self.point), self.shape)
        return self._f

    def same(self, other: "_Val") -> bool:
        """True when bit-identical; False means 'compare the dequantized values'."""
        import torch

        a, b = self.raw, other.raw
        if a is b:
            return True
        if a is None or b is None or a.dtype != b.dtype:
            return False
        pa, pb = self.point, other.point
        if (pa.scale, pa.zero_point) != (pb.scale, pb.zero_point):
            return False
        a, b = align(a, self.shape), align(b, other.shape)
        return a is not None and b is not None and torch.equal(a, b)


class _FinalRun:
    """Runs the final (lowered) program once per sample and, right after each layer, the same
    kernel again on the fake-quant references of its inputs (the layer's local error). Nodes
    with no reference of their own get one by running their op on their inputs' references."""

    def __init__(self, stage: StageProgram, plans: list[LayerPlan], by_node: dict[str, LayerPlan],
                 fnodes: dict[str, Any], fq_raw: dict[str, Any], float_raw: dict[str, Any],
                 local: bool = True) -> None:
        self.stage, self.plans, self.by_node, self.fnodes = stage, plans, by_node, fnodes
        self.local = local
        self.fq_raw, self.float_raw = fq_raw, float_raw
        self.env: dict[Any, Any] = {}
        self.isolated: dict[str, Any] = {}          # layer -> dequantized local output
        self.derived_fq: dict[str, Any] = {}
        self.derived_float: dict[str, Any] = {}
        self._ref: dict[str, Any] = {}
        self._fref: dict[str, Any] = {}

    def run(self, sample: tuple, reuse: Reuse | None = None) -> Any:
        self._live: dict[Any, Any] = {}
        rec = run_capture(self.stage.program, sample, set(), keep_env=True, after_node=self._after,
                          reuse=reuse)
        self.env = self._live          # keyed by FX node (rec.env is keyed by name)
        for lp in self.plans:
            if lp.reference == "derived":
                self._derive(lp)
        return rec

    # -- references in the final graph's layout -------------------------------------------
    def _after(self, n: Any, value: Any, env: dict) -> None:
        self._live = env
        lp = self.by_node.get(n.name)
        if not self.local or lp is None or lp.reference != "mapped" or lp.fq_point is None:
            return
        changed = False

        def sub(a: Any) -> Any:
            nonlocal changed
            if hasattr(a, "op") and hasattr(a, "name"):
                actual = env[a]
                r = self.ref(a, env)
                if r is not actual and hasattr(r, "dtype") and not _same(r, actual):
                    changed = True
                return r
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a

        args = tuple(sub(a) for a in n.args)
        kwargs = {k: sub(v) for k, v in n.kwargs.items()}
        out = n.target(*args, **kwargs) if changed else value
        self.isolated[n.name] = align(dequant(out, lp.final_point), _shape_of(out))

    def ref(self, node: Any, env: dict) -> Any:
        """The fake-quant value of `node`'s output, shaped like the lowered one."""
        if node.name in self._ref:
            return self._ref[node.name]
        actual = env.get(node)
        r = actual
        lp = self.by_node.get(node.name)
        if lp is not None and lp.reference == "mapped" and lp.fq_point is not None \
                and lp.fq_point.node in self.fq_raw:
            fitted = align_like(self.fq_raw[lp.fq_point.node], actual)
            r = fitted if fitted is not None else actual
        elif is_getitem(node) and node.args[1] == 0 and node.args[0].name in self.by_node:
            r = self.ref(node.args[0], env)
        elif node.op == "call_function" and not is_alloc(node) and node.all_input_nodes:
            r = self._recompute(node, env)
        self._ref[node.name] = r
        return r

    def _recompute(self, node: Any, env: dict) -> Any:
        changed = False

        def sub(a: Any) -> Any:
            nonlocal changed
            if hasattr(a, "op") and hasattr(a, "name"):
                r = self.ref(a, env)
                if r is not env.get(a):
                    changed = True
                return r
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a

        args = tuple(sub(a) for a in node.args)
        kwargs = {k: sub(v) for k, v in node.kwargs.items()}
        if not changed:
            return env.get(node)
        try:
            return node.target(*args, **kwargs)
        except Exception:  # noqa: BLE001 - no reference for this node, keep the lowered value
            return env.get(node)

    def _derive(self, lp: LayerPlan) -> None:
        node = self.fnodes[lp.node]
        r = self.ref(node, self.env)
        if r is not None:
            self.derived_fq[lp.node] = align(dequant(r, lp.final_point), _shape_of(r))
        f = self._float_units(node)
        if f is not None:
            t = first_tensor(f)
            p = lp.final_point
            self.derived_float[lp.node] = ((t - p.zero_point) * p.scale if p.scale is not None
                                           else t).to(t.dtype)

    def _float_units(self, node: Any) -> Any:
        """Float reference of `node` in its integer units (x/scale + zp, unrounded) for integer
        tensors, plain float for float ones; derived nodes run their op on these."""
        import torch

        if node.name in self._fref:
            return self._fref[node.name]
        lp = self.by_node.get(node.name)
        actual = self.env.get(node)
        out: Any = None
        if lp is not None and lp.float_point is not None and lp.float_point.node in self.float_raw:
            t = first_tensor(self.float_raw[lp.float_point.node])
            a = first_tensor(actual)
            t = align(t.to(torch.float32), tuple(a.shape)) if a is not None else None
            if t is not None:
                p = lp.final_point
                out = t / p.scale + p.zero_point if p.scale is not None else t
        elif lp is not None and lp.reference == "derived" and node.all_input_nodes:
            def sub(a: Any) -> Any:
                if hasattr(a, "op") and hasattr(a, "name"):
                    v = self._float_units(a)
                    return v if v is not None else self.env.get(a)
                if isinstance(a, (list, tuple)):
                    return type(a)(sub(x) for x in a)
                return a
            try:
                res = node.target(*(sub(a) for a in node.args),
                                  **{k: sub(v) for k, v in node.kwargs.items()})
                res_t = first_tensor(res)
                out = res_t if res_t is not None and res_t.is_floating_point() else None
            except Exception:  # noqa: BLE001 - the op only takes integers: no float reference
                out = None
        elif is_getitem(node) and node.args[1] == 0:
            out = self._float_units(node.args[0])
        self._fref[node.name] = out
        return out


def _same(a: Any, b: Any) -> bool:
    import torch

    try:
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    except Exception:  # noqa: BLE001
        return False


def _shape_of(v: Any) -> tuple[int, ...]:
    t = first_tensor(v)
    return tuple(t.shape) if t is not None else ()
