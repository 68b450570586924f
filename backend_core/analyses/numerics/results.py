"""Plain, JSON-serialisable results of a numerics run.

Kept free of torch and Qt so the GUI process (which never imports torch) can rebuild them from
the worker's JSON lines with `NumericsResult.from_dict`. Every per-layer record is keyed by the
node id of the FINAL snapshot, so a point in a plot links straight to a node in the graph view.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

# SQNR of two identical tensors is +inf, of a zero reference with an error -inf. JSON has no
# infinities and plots cannot draw them, so SQNR is clamped to this range; `identical` says
# whether the tensors were bit-for-bit equal.
SQNR_CAP_DB = 150.0

# Comparisons a layer carries (attribute names of LayerResult / OutputResult).
PAIR_LOWERED_VS_FQ = "vs_fake_quant"        # lowered program vs PT2E fake-quant, cumulative
PAIR_LOWERED_VS_FLOAT = "vs_float"          # lowered program vs float model, cumulative
PAIR_FQ_VS_FLOAT = "fake_quant_vs_float"    # quantization error alone
PAIR_LOCAL = "local"                        # this layer's kernel on the reference's inputs
PAIRS = (PAIR_LOCAL, PAIR_LOWERED_VS_FQ, PAIR_LOWERED_VS_FLOAT, PAIR_FQ_VS_FLOAT)
PAIR_LABELS = {
    PAIR_LOCAL: "local (kernel on reference inputs) vs fake-quant",
    PAIR_LOWERED_VS_FQ: "lowered vs fake-quant",
    PAIR_LOWERED_VS_FLOAT: "lowered vs float",
    PAIR_FQ_VS_FLOAT: "fake-quant vs float",
}


@dataclass(frozen=True)
class Metrics:
    """Error of a tested tensor against a reference, pooled over every input sample."""

    sqnr_db: float           # 10·log10(Σref² / Σ(test-ref)²), clamped to ±SQNR_CAP_DB
    cosine: float            # cosine similarity of the flattened tensors
    max_abs: float           # max |test - ref| in the float domain
    mean_abs: float          # mean |test - ref|
    max_lsb: float | None    # max_abs in units of the output scale (None for float tensors)
    mean_lsb: float | None
    identical: bool          # bit-for-bit equal on every sample
    count: int               # number of elements compared

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> "Metrics | None":
        return Metrics(**d) if d else None


@dataclass(frozen=True)
class Histogram:
    edges: tuple[float, ...]
    counts: tuple[int, ...]


@dataclass
class LayerResult:
    """One node of the final graph whose output could be compared."""

    node_id: str                         # id in the FINAL snapshot
    index: int                           # position among layers, topological order
    target: str
    kind: str                            # snapshot kind (cmsis_nn, portable_fallback, ...)
    module_path: str = ""
    debug_handle: int | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    scale: float | None = None           # output scale used to dequantize / express LSBs
    zero_point: int | None = None
    qmin: int | None = None
    qmax: int | None = None
    reference: str = "mapped"            # mapped | derived (no debug_handle: same op on refs) | none
    vs_fake_quant: Metrics | None = None
    vs_float: Metrics | None = None
    fake_quant_vs_float: Metrics | None = None
    local: Metrics | None = None
    refs: dict[str, str] = field(default_factory=dict)      # stage name -> node the value came from
    sample: dict[str, list[float]] = field(default_factory=dict)   # float/fake_quant/lowered, aligned
    int_hist: list[int] | None = None    # lowered integer values, one count per level qmin..qmax
    float_hist: Histogram | None = None  # float reference values

    def metric(self, pair: str) -> Metrics | None:
        return getattr(self, pair)

    def label(self) -> str:
        short = self.target.replace(".default", "").replace("cortex_m.", "")
        return f"{self.node_id} ({short}{', ' + self.module_path if self.module_path else ''})"


@dataclass
class OutputResult:
    index: int
    shape: tuple[int, ...] | None
    vs_fake_quant: Metrics | None = None
    vs_float: Metrics | None = None
    fake_quant_vs_float: Metrics | None = None
    # Classifiers only (2-D output, more than one class): share of samples whose argmax agrees.
    top1_vs_float: float | None = None
    top1_vs_fake_quant: float | None = None
    top1_fake_quant_vs_float: float | None = None


@dataclass
class StageCheck:
    """Is a runnable stage numerically identical to the previous runnable stage?"""

    stage: str
    index: int
    previous: str | None
    status: str                          # neutral | diverged | unchanged | not_runnable | reference | failed
    first_diverging: str | None = None   # final-snapshot node id of the first layer that differs
    diverging_layers: int = 0
    max_abs_diff: float = 0.0
    max_lsb_diff: float | None = None
    outputs_identical: bool | None = None
    passes: tuple[str, ...] = ()         # passes folded into this step (non-runnable ones before it)
    seconds: float = 0.0                 # time spent running this stage on every input
    note: str = ""

    def summary(self) -> str:
        via = f" (via {', '.join(self.passes)})" if len(self.passes) > 1 else ""
        if self.status == "neutral":
            return f"{self.stage}: numerically neutral{via}"
        if self.status == "diverged":
            lsb = f", max {self.max_lsb_diff:g} LSB" if self.max_lsb_diff is not None else ""
            where = self.first_diverging or "model outputs"
            return (f"{self.stage}: diverges from {self.previous} first at {where} "
                    f"({self.diverging_layers} layers differ{lsb}){via}")
        return f"{self.stage}: {self.status}{' — ' + self.note if self.note else ''}"


@dataclass
class NumericsResult:
    model: str
    target: str
    flow: str
    inputs: str                          # description of the samples (example / N random / folder)
    n_inputs: int
    final_stage: str
    layers: list[LayerResult] = field(default_factory=list)
    outputs: list[OutputResult] = field(default_factory=list)
    stages: list[StageCheck] = field(default_factory=list)
    seconds: float = 0.0                 # analysis time (not the lowering)
    lowering_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    # -- queries ---------------------------------------------------------------------------
    def layer(self, node_id: str) -> LayerResult | None:
        return next((lr for lr in self.layers if lr.node_id == node_id), None)

    def worst(self, n: int | None = None, pair: str = PAIR_LOCAL) -> list[LayerResult]:
        """Layers sorted by SQNR of `pair`, lowest first; layers without it go last.
        Ties (e.g. many layers capped as identical) keep the order of the cumulative error."""
        def key(lr: LayerResult) -> tuple:
            m = lr.metric(pair)
            fb = lr.vs_fake_quant or lr.vs_float
            return (m is None, m.sqnr_db if m else 0.0, fb.sqnr_db if fb else SQNR_CAP_DB, lr.index)
        out = sorted(self.layers, key=key)
        return out[:n] if n else out

    # -- serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _clean(asdict(self))

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), allow_nan=False, **kw)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "NumericsResult":
        def layer(x: dict[str, Any]) -> LayerResult:
            x = dict(x)
            for p in PAIRS:
                x[p] = Metrics.from_dict(x.get(p))
            fh = x.get("float_hist")
            x["float_hist"] = Histogram(tuple(fh["edges"]), tuple(fh["counts"])) if fh else None
            x["shape"] = tuple(x["shape"]) if x.get("shape") is not None else None
            return LayerResult(**x)

        def output(x: dict[str, Any]) -> OutputResult:
            x = dict(x)
            for p in (PAIR_LOWERED_VS_FQ, PAIR_LOWERED_VS_FLOAT, PAIR_FQ_VS_FLOAT):
                x[p] = Metrics.from_dict(x.get(p))
            x["shape"] = tuple(x["shape"]) if x.get("shape") is not None else None
            return OutputResult(**x)

        def stage(x: dict[str, Any]) -> StageCheck:
            x = dict(x)
            x["passes"] = tuple(x.get("passes", ()))
            return StageCheck(**x)

        base = {k: v for k, v in d.items() if k not in ("layers", "outputs", "stages")}
        return NumericsResult(**base, layers=[layer(x) for x in d.get("layers", [])],
                              outputs=[output(x) for x in d.get("outputs", [])],
                              stages=[stage(x) for x in d.get("stages", [])])

    @staticmethod
    def from_json(text: str) -> "NumericsResult":
        return NumericsResult.from_dict(json.loads(text))


def _clean(o: Any) -> Any:
    """Tuples to lists and non-finite floats to None, so json.dumps(allow_nan=False) succeeds."""
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o
