"""The streaming accumulators of one numerics run: per-layer errors and histograms, per-output errors
and top-1 agreement, and each runnable stage's divergence from the one before it.

Split from analyze.py so its sample loop only runs programs; every sample's values are added here
while they are alive and dropped after, so memory does not grow with the number of samples.
"""
from __future__ import annotations

from typing import Any

from backend_core.analyses.numerics.align import LayerPlan
from backend_core.analyses.numerics.capture import StageProgram
from backend_core.analyses.numerics.compare import Divergence, LayerValue, layer_result
from backend_core.analyses.numerics.metrics import ErrorAccumulator, FloatHistogram, IntHistogram, top1
from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT,
                                                    PAIR_LOWERED_VS_FQ, LayerResult, OutputResult)
from backend_core.analyses.numerics.tensors import align, first_tensor, sample_indices

OUTPUT_PAIRS = (PAIR_LOWERED_VS_FQ, PAIR_LOWERED_VS_FLOAT, PAIR_FQ_VS_FLOAT)


class MetricPool:
    """Everything a numerics run pools over its samples."""

    def __init__(self, plans: list[LayerPlan], chain: list[StageProgram], sample_size: int) -> None:
        self.plans = plans
        self.sample_size = sample_size
        self.accs: dict[str, dict[str, ErrorAccumulator]] = {p: {} for p in (PAIR_LOCAL, *OUTPUT_PAIRS)}
        for lp in plans:
            sc = lp.qparam.scale if (lp.is_int and lp.qparam) else None
            for p in self.accs:
                self.accs[p][lp.node] = ErrorAccumulator(sc)
        self.ihist = {lp.node: IntHistogram(lp.qparam.qmin, lp.qparam.qmax)
                      for lp in plans if lp.is_int and lp.qparam}
        self.fhist = {lp.node: FloatHistogram() for lp in plans}
        self.samples_out: dict[str, dict[str, list[float]]] = {lp.node: {} for lp in plans}
        self.out_accs: list[dict[str, ErrorAccumulator]] = []
        self.top1_hits: list[dict[str, int]] = []
        self.top1_n: list[int] = []
        self.out_shapes: list[Any] = []
        self.div = {s.name: Divergence() for s in chain[1:]}

    def add_layers(self, first_sample: bool, low: dict[str, Any], fqv: dict[str, Any], flv: dict[str, Any],
                   isolated: dict[str, Any], final_raw: dict[str, Any]) -> None:
        """One sample's per-layer values: lowered, fake-quant, float, the layer run alone on fake-quant
        inputs, and the final stage's raw (integer) values."""
        for lp in self.plans:
            n = lp.node
            lv, qv, fv = low.get(n), fqv.get(n), flv.get(n)
            if lv is not None and qv is not None:
                self.accs[PAIR_LOWERED_VS_FQ][n].add(qv, lv)
            if lv is not None and fv is not None:
                self.accs[PAIR_LOWERED_VS_FLOAT][n].add(fv, lv)
            if qv is not None and fv is not None:
                self.accs[PAIR_FQ_VS_FLOAT][n].add(fv, qv)
            iso = isolated.get(n)
            if iso is not None and qv is not None:
                self.accs[PAIR_LOCAL][n].add(qv, iso)
            if n in self.ihist:
                self.ihist[n].add(first_tensor(final_raw[n]))
            if fv is not None:
                self.fhist[n].add(fv)
            if first_sample and lv is not None:
                self._keep_sample(n, lv, qv, fv)

    def _keep_sample(self, node: str, lv: Any, qv: Any, fv: Any) -> None:
        """The first sample's values at the same indices, for the window's scatter plots."""
        idx = sample_indices(lv.numel(), self.sample_size)
        self.samples_out[node]["lowered"] = _pick(lv, idx)
        if qv is not None:
            self.samples_out[node]["fake_quant"] = _pick(qv, idx)
        if fv is not None:
            self.samples_out[node]["float"] = _pick(fv, idx)

    def add_outputs(self, lo: list[Any], qo: list[Any], fo: list[Any]) -> None:
        """One sample's model outputs: lowered, fake-quant and float."""
        while len(self.out_accs) < len(lo):
            self.out_accs.append({p: ErrorAccumulator() for p in OUTPUT_PAIRS})
            self.top1_hits.append(dict.fromkeys(OUTPUT_PAIRS, 0))
            self.top1_n.append(0)
            self.out_shapes.append(None)
        for i, l_out in enumerate(lo):
            if l_out is None:
                continue
            self.out_shapes[i] = tuple(l_out.shape)
            q_out = qo[i] if i < len(qo) else None
            f_out = fo[i] if i < len(fo) else None
            pairs = ((PAIR_LOWERED_VS_FQ, q_out, l_out), (PAIR_LOWERED_VS_FLOAT, f_out, l_out),
                     (PAIR_FQ_VS_FLOAT, f_out, q_out))
            classify = top1(l_out) is not None
            if classify:
                self.top1_n[i] += 1
            for p, ref, test in pairs:
                if ref is None or test is None or not ref.is_floating_point():
                    continue
                r = align(ref.float(), tuple(test.shape))
                if r is None:
                    continue
                self.out_accs[i][p].add(r, test.float())
                if classify and top1(r) == top1(test.float()):
                    self.top1_hits[i][p] += 1

    def add_neutrality(self, chain: list[StageProgram], values: dict[str, dict[str, LayerValue]],
                       outputs: dict[str, list[Any]]) -> None:
        """Whether each runnable stage computed what the previous one did, layer by layer."""
        import torch

        for prev, cur in zip(chain, chain[1:]):
            d = self.div[cur.name]
            d.compared += 1
            a, b = values[prev.name], values[cur.name]
            for lp in self.plans:
                ra, rb = a.get(lp.node), b.get(lp.node)
                if ra is None or rb is None or lp.reference != "mapped" or ra.same(rb):
                    continue
                va, vb = ra.f(), rb.f()
                if va is None or vb is None or torch.equal(va, vb):
                    continue
                diff = float((va.double() - vb.double()).abs().max())
                d.differs[lp.node] = max(d.differs.get(lp.node, 0.0), diff)
                if lp.is_int and lp.qparam and lp.qparam.scale > 0:
                    d.lsb[lp.node] = max(d.lsb.get(lp.node, 0.0), diff / lp.qparam.scale)
            oa, ob = outputs[prev.name], outputs[cur.name]
            if len(oa) != len(ob) or any(x is None or y is None or x.shape != y.shape or
                                         not torch.equal(x, y) for x, y in zip(oa, ob)):
                d.outputs_identical = False

    def layer_results(self) -> list[LayerResult]:
        return [layer_result(lp, self.accs, self.ihist, self.fhist, self.samples_out) for lp in self.plans]

    def output_results(self) -> list[OutputResult]:
        outs = []
        for i, acc in enumerate(self.out_accs):
            n, hits = self.top1_n[i], self.top1_hits[i]
            outs.append(OutputResult(
                index=i, shape=self.out_shapes[i],
                vs_fake_quant=acc[PAIR_LOWERED_VS_FQ].result(),
                vs_float=acc[PAIR_LOWERED_VS_FLOAT].result(),
                fake_quant_vs_float=acc[PAIR_FQ_VS_FLOAT].result(),
                top1_vs_fake_quant=hits[PAIR_LOWERED_VS_FQ] / n if n else None,
                top1_vs_float=hits[PAIR_LOWERED_VS_FLOAT] / n if n else None,
                top1_fake_quant_vs_float=hits[PAIR_FQ_VS_FLOAT] / n if n else None))
        return outs


def _pick(t: Any, idx: Any) -> list[float]:
    flat = t.reshape(-1)
    return [float(x) for x in flat[idx].tolist()]
