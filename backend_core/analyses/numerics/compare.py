"""Comparing captured values: a layer's value at a tensor point, the running divergence of
one stage from the previous runnable one, and turning the accumulated metrics into the
per-layer results and per-stage checks of a `NumericsResult`.

Split from analyze.py so the sample loop there only orchestrates; nothing here runs a program.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.analyses.numerics.align import LayerPlan, Point
from backend_core.analyses.numerics.capture import StageProgram
from backend_core.analyses.numerics.metrics import ErrorAccumulator, FloatHistogram, IntHistogram
from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ,
                      LayerResult, StageCheck)
from backend_core.analyses.numerics.tensors import align, dequant, first_tensor


@dataclass
class Divergence:
    """Running comparison of one stage with the previous runnable stage."""

    differs: dict[str, float] = field(default_factory=dict)   # layer -> max abs diff
    lsb: dict[str, float] = field(default_factory=dict)
    outputs_identical: bool = True
    compared: int = 0
    seconds: float = 0.0


def layer_result(lp: LayerPlan, accs: dict[str, dict[str, ErrorAccumulator]],
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


def stage_checks(stages: list[StageProgram], chain: list[StageProgram],
                  div: dict[str, Divergence], seconds: dict[str, float], plans: list[LayerPlan],
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


class LayerValue:
    """A captured value at a layer's tensor point, dequantized only when a metric needs it
    (stage-to-stage checks compare the integers directly when both sides share qparams)."""

    __slots__ = ("raw", "point", "shape", "_f")

    def __init__(self, raw: Any, point: Point, shape: tuple[int, ...]) -> None:
        self.raw, self.point, self.shape, self._f = first_tensor(raw), point, shape, None

    def f(self) -> Any:
        if self._f is None and self.raw is not None:
            self._f = align(dequant(self.raw, self.point), self.shape)
        return self._f

    def same(self, other: "LayerValue") -> bool:
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
