"""Per-layer numeric gaps of a target run, as plain data (no Qt, no torch at import time).

ExecuTorch's `Inspector.calculate_numeric_gap` pairs the intermediate outputs the runner dumped into the
ETDump (debug buffer) with the same nodes run on the host from the ETRecord, keyed by debug handle.
This module turns those pairs into rows keyed by the FINAL snapshot's node ids (the ids the graph view
shows, so a click on a gap selects a node), computes the metrics we want next to the Inspector's own,
and renders the worst layers as a table. The torch/ExecuTorch side lives in gaps_inspector.py.

Why our own metrics besides the Inspector's gap: its MSE is in the tensor's own units (int8 LSBs for
quantized tensors, which are not comparable across layers with different scales), its SNR is infinite
for identical tensors (not JSON), and a max-abs / mismatch count says more about kernels than a mean."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from backend_core.common.snapshot.model import KIND_QUANT, GraphSnapshot

METRICS = ("MSE", "L1", "SNR")


@dataclass
class TensorPair:
    """One matched (host, target) output pair, already reduced to numbers by gaps_inspector."""

    aot_debug_handle: tuple[int, ...]
    aot_ops: list[str]
    runtime_ops: list[str]
    gap: float | None                  # the Inspector's value for the chosen metric
    mse: float
    l1: float
    max_abs: float
    mismatched: int                    # elements that differ at all
    numel: int
    dtype: str
    shape: tuple[int, ...]
    signal_power: float                # mean(host²), for the SNR
    layout_fixed: bool = False         # runtime bytes re-read in the program's dim order


@dataclass
class LayerGap:
    """A gap row on the final graph: what the GUI plots and the CLI prints."""

    index: int                         # position in execution order
    debug_handles: list[int]
    node_id: str | None                # the node to select (first compute op of the handle)
    node_ids: list[str]                # every final-graph node sharing the handle(s)
    measured_node: str | None          # the node whose output was compared (last op of the handle)
    target: str
    kind: str
    module_path: str
    aot_ops: list[str]
    runtime_ops: list[str]
    dtype: str
    shape: list[int]
    gap: float | None                  # Inspector's metric, tensor units
    mse: float
    l1: float
    max_abs: float
    snr_db: float | None               # None when the tensors are identical (infinite SNR)
    mismatched: int
    numel: int
    scale: float | None = None         # output scale when the tensor is quantized
    mse_real: float | None = None      # MSE in real units (scale² x MSE in LSBs)
    layout_fixed: bool = False

    @property
    def identical(self) -> bool:
        return self.mismatched == 0

    @property
    def real_mse(self) -> float | None:
        """MSE in real units: scaled for quantized tensors, as is for float ones, None when unknown."""
        if self.mse_real is not None:
            return self.mse_real
        return self.mse if self.dtype.startswith(("torch.float", "torch.bfloat")) else None


@dataclass
class GapReport:
    """All rows of one run plus how they were obtained."""

    metric: str
    layers: list[LayerGap] = field(default_factory=list)
    reference_graph: str = "edge_dialect_exported_program"
    unmapped_handles: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def first_divergence(self) -> LayerGap | None:
        """The first layer, in execution order, whose target output differs from the host's: later
        layers inherit its error, so this is where to look first."""
        return next((g for g in self.layers if not g.identical), None)

    def worst(self, n: int = 10) -> list[LayerGap]:
        """Layers with the largest MSE in real units; integer tensors of unknown scale (LSBs are not
        comparable with real units) come after, by their LSB MSE."""
        def key(g: LayerGap) -> tuple[int, float, float]:
            real = g.real_mse
            return (1, real, g.max_abs) if real is not None else (0, g.mse, g.max_abs)
        return sorted(self.layers, key=key, reverse=True)[:n]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["identical_layers"] = sum(1 for g in self.layers if g.identical)
        first = self.first_divergence
        d["first_divergence"] = None if first is None else first.node_id
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "GapReport":
        layers = [LayerGap(**{k: v for k, v in g.items() if k in LayerGap.__dataclass_fields__})
                  for g in d.get("layers", [])]
        return GapReport(d.get("metric", "MSE"), layers, d.get("reference_graph", ""),
                         list(d.get("unmapped_handles", [])), list(d.get("notes", [])))

    def table(self, n: int = 10) -> str:
        """The worst layers as fixed-width text for the CLI."""
        same = sum(1 for g in self.layers if g.identical)
        head = (f"per-layer gaps (target vs host, {len(self.layers)} layers, {same} bit-identical; "
                f"worst {min(n, len(self.layers))} by MSE in real units):")
        rows = [f"  {'node':46} {'op':30} {'MSE(LSB)':>10} {'MSE(real)':>11} {'max|d|':>7} "
                f"{'differ':>13} {'SNR dB':>7}"]
        for g in self.worst(n):
            real = "-" if g.mse_real is None else f"{g.mse_real:.3g}"
            snr = "inf" if g.snr_db is None else f"{g.snr_db:.1f}"
            op = g.target.replace("cortex_m.", "").replace(".default", "")
            rows.append(f"  {(g.node_id or '?')[:46]:46} {op[:30]:30} {g.mse:10.4g} {real:>11} "
                        f"{g.max_abs:7.4g} {g.mismatched:>6}/{g.numel:<6} {snr:>7}")
        first = self.first_divergence
        if first is not None:
            rows.append(f"  first divergence (execution order): {first.node_id} ({first.target}), "
                        f"{first.mismatched}/{first.numel} elements differ, max |d| {first.max_abs:g}")
        rows += [f"  note: {t}" for t in self.notes]
        return "\n".join([head] + rows)


def snr_db(signal_power: float, mse: float) -> float | None:
    """10·log10(signal/noise); None when undefined: identical tensors (infinite) or a zero signal."""
    if mse <= 0.0 or signal_power <= 0.0:
        return None
    return 10.0 * math.log10(signal_power / mse)


def _handles_to_nodes(final: GraphSnapshot) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for n in final.nodes:
        if n.debug_handle is not None:
            out.setdefault(int(n.debug_handle), []).append(n.id)
    return out


def _pick(final: GraphSnapshot, candidates: Sequence[str], aot_ops: Sequence[str]) -> tuple[str | None, str | None]:
    """(node to select, node measured): the Inspector names ops by FX node name, which the final
    snapshot keeps; prefer a compute op over a quantize/dequantize boundary for selection."""
    named = [o for o in aot_ops if final.node(o) is not None] or list(candidates)
    if not named:
        return None, None
    compute = [o for o in named if final.node(o).kind != KIND_QUANT]  # type: ignore[union-attr]
    return (compute or named)[0], named[-1]


def map_to_final(pairs: Iterable[TensorPair], final: GraphSnapshot, metric: str = "MSE") -> GapReport:
    """Key every pair by the final snapshot's node ids (debug handles survive every Cortex-M pass)."""
    by_handle = _handles_to_nodes(final)
    report = GapReport(metric.upper())
    for i, p in enumerate(pairs):
        ids = [nid for h in p.aot_debug_handle for nid in by_handle.get(int(h), [])]
        if not ids:
            report.unmapped_handles.extend(int(h) for h in p.aot_debug_handle)
        select, measured = _pick(final, ids, p.aot_ops)
        node = final.node(select) if select else None
        mnode = final.node(measured) if measured else None
        q = mnode.output_qparams if mnode is not None else None
        scale = q.scale if (q is not None and p.dtype.startswith(("torch.int", "torch.uint"))) else None
        report.layers.append(LayerGap(
            index=i, debug_handles=[int(h) for h in p.aot_debug_handle], node_id=select, node_ids=ids,
            measured_node=measured, target=node.target if node else ",".join(p.aot_ops),
            kind=node.kind if node else "", module_path=node.module_path if node else "",
            aot_ops=list(p.aot_ops), runtime_ops=list(p.runtime_ops), dtype=p.dtype, shape=list(p.shape),
            gap=_finite(p.gap), mse=p.mse, l1=p.l1, max_abs=p.max_abs, snr_db=snr_db(p.signal_power, p.mse),
            mismatched=p.mismatched, numel=p.numel, scale=scale,
            mse_real=None if scale is None else p.mse * scale * scale, layout_fixed=p.layout_fixed))
    if any(p.layout_fixed for p in report.layers):
        report.notes.append("channels-last outputs were re-read in the program's dim order: the ETDump "
                            "holds raw bytes and the Inspector reads them as contiguous NCHW")
    return report


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)
