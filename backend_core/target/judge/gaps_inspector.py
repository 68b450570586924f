"""The ExecuTorch side of per-layer gaps: `Inspector.calculate_numeric_gap` over the runner's ETDump +
debug buffer (the .bpte and its ETRecord from ONE lowering: backend_core/orchestration/jobs/steps/etrecord_lowering.py).

Why one lowering for both: the ETDump names instructions by the debug handles of the program that ran,
so the ETRecord must come from the very ExecutorchProgramManager the .bpte was serialised from (the
cached .bpte of `lower()` has no live programs behind it). The ETRecord gets the BundledProgram, which
also gives the Inspector its representative inputs.

Measured traps (ExecuTorch 1.5.1, DS-CNN on QEMU M55):
- loading the ETRecord needs the cortex_m ops registered (`import executorch.backends.cortex_m.passes`),
  else its graph holds "fake operators" and the host run fails;
- the default reference graph ("exported_program") needs every node to carry a debug handle, and the
  passes add `alloc`/`pad` nodes without one (KeyError 'debug_handle'): use the edge program, which is
  the final Cortex-M graph with host reference kernels;
- the debug buffer holds raw bytes and the Inspector reads them as contiguous tensors, but the convs'
  outputs are channels-last: they are re-read in the dim order the program gave each output (node
  meta["val"] strides, exactly what the emitter writes into the .pte), never guessed from the host
  tensor's strides;
- the ETRecord's representative inputs (the host run's inputs) come from the bundle it is generated
  from, and the .bpte's bundle holds its tensors in the program's dim orders (channels-last bytes,
  files.bundled_program): the ETRecord gets a twin bundle with the logical tensors as given. Before, a 3-channel resnet8 that
  PASSed with error 7e-4
  showed its input quantize bit-identical (same bytes both sides) and every later layer wrong
  (first conv 12179/16384 differ); 1-channel models (ds_cnn) hid it."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.target.judge.gaps import METRICS, GapReport, TensorPair, map_to_final

REFERENCE_GRAPH = "edge_dialect_exported_program"


def record_bundle(et_program: Any, inputs: Any, expected: Any) -> Any:
    """The BundledProgram the ETRecord is generated from: same program, logical (host) tensors."""
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram

    return BundledProgram(et_program, [MethodTestSuite("forward", [
        MethodTestCase(inputs=list(inputs), expected_outputs=list(expected))])])


def program_dim_orders(graph_module: Any) -> dict[int, tuple[int, ...]]:
    """debug handle -> dim order of the output the target wrote for it, from the program itself.

    The emitter writes each tensor's dim order into the .pte from the node's `meta["val"]` strides
    (exir.tensor.TensorSpec: `dim_order_from_stride`), and the runtime lays the bytes out in that
    order; this reads it the same way. Like the Inspector's IntermediateOutputCapturer, the last node
    of a handle (in graph order) is the one whose output is compared."""
    import torch
    from executorch.exir.tensor import dim_order_from_stride

    out: dict[int, tuple[int, ...]] = {}
    for node in graph_module.graph.nodes:
        h = node.meta.get("debug_handle")
        if node.op != "call_function" or h is None or "getitem" in str(node.target):
            continue
        val = node.meta.get("val")
        if isinstance(val, (list, tuple)) and len(val) == 1:
            val = val[0]
        if not isinstance(val, torch.Tensor):
            continue
        order = tuple(int(d) for d in dim_order_from_stride(tuple(val.stride())))
        for handle in ((h,) if isinstance(h, int) else tuple(h)):
            out[int(handle)] = order
    return out


def handle_dim_order(handles: Any, dim_orders: dict[int, tuple[int, ...]]) -> tuple[int, ...] | None:
    """The dim order of a (possibly merged) Inspector debug-handle tuple: its last handle's output."""
    found = [dim_orders[int(h)] for h in sorted(handles) if int(h) in dim_orders]
    return found[-1] if found else None


def match_layout(runtime: Any, dim_order: tuple[int, ...] | None) -> tuple[Any, bool]:
    """Re-read the runtime tensor, which the Inspector builds as contiguous over the raw debug-buffer
    bytes, in the dim order the program gave it (see program_dim_orders). No guessing from the host
    tensor's strides: those come from the host run on the host's inputs, not from what the target wrote
    (and are ambiguous for sizes of 1)."""
    import torch

    if not isinstance(runtime, torch.Tensor) or dim_order is None or len(dim_order) != runtime.dim():
        return runtime, False
    if list(dim_order) == list(range(runtime.dim())) or not runtime.is_contiguous():
        return runtime, False
    inverse = [list(dim_order).index(i) for i in range(runtime.dim())]
    fixed = runtime.reshape([runtime.shape[i] for i in dim_order]).permute(inverse)
    return fixed, True


def _single(x: Any) -> Any:
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return x[0]
    return x


def _comparator(metric: str, dim_orders: dict[int, tuple[int, ...]]) -> Any:
    """The Inspector's own comparator for `metric` with our layout fix as its preprocessing step."""
    from executorch.devtools.inspector.numerical_comparator import (
        L1Comparator, MSEComparator, SNRComparator)

    base = {"MSE": MSEComparator, "L1": L1Comparator, "SNR": SNRComparator}[metric]

    class LayoutAware(base):  # type: ignore[misc, valid-type]
        def preprocessing(self, mapping: dict) -> dict:
            self.fixed: set[tuple[int, ...]] = set()
            out = {}
            for (ah, a), (rh, r) in mapping.items():
                r2, did = match_layout(_single(r), handle_dim_order(ah, dim_orders))
                if did:
                    self.fixed.add(tuple(ah))
                    r = r2
                out[(ah, a)] = (rh, r)
            return out

    return LayoutAware()


def _pair(row: Any, fixed: set[tuple[int, ...]]) -> TensorPair | None:
    import torch

    a, r = _single(row["aot_intermediate_output"]), _single(row["runtime_intermediate_output"])
    if not (isinstance(a, torch.Tensor) and isinstance(r, torch.Tensor)) or a.shape != r.shape:
        return None
    fa, fr = a.detach().double(), r.detach().double()
    d = fa - fr
    gap = row["gap"]
    gap = _single(gap) if isinstance(gap, (list, tuple)) else gap
    return TensorPair(tuple(int(h) for h in row["aot_debug_handle"]), list(row["aot_ops"]),
                      list(row["runtime_ops"]), None if gap is None else float(gap),
                      float((d * d).mean()), float(d.abs().mean()), float(d.abs().max()) if d.numel() else 0.0,
                      int((d != 0).sum()), int(d.numel()), str(a.dtype), tuple(a.shape),
                      float((fa * fa).mean()), tuple(int(h) for h in row["aot_debug_handle"]) in fixed)


def compute_gaps(etdump: Path, debug_buffer: Path, etrecord: Path, final: GraphSnapshot,
                 metric: str = "MSE") -> GapReport:
    """Inspector over the ETDump -> per-layer rows on the final graph's node ids."""
    metric = metric.upper()
    if metric not in METRICS:
        raise BadInputError(f"Unknown gap metric {metric!r}.", f"Use one of {', '.join(METRICS)}.")
    for p, what in ((etdump, "ETDump"), (debug_buffer, "debug buffer"), (etrecord, "ETRecord")):
        if not Path(p).is_file():
            raise BadInputError(f"No {what} at {p}.", "Run with --etdump so the runner dumps intermediate outputs.")
    import executorch.backends.cortex_m.passes  # noqa: F401  registers cortex_m ops for the ETRecord graph
    from executorch.devtools import Inspector
    from executorch.devtools.etrecord import parse_etrecord

    with warnings.catch_warnings():   # torch.frombuffer on the read-only debug buffer: harmless, we only read
        warnings.filterwarnings("ignore", message="The given buffer is not writable")
        record = parse_etrecord(str(etrecord))
        edge = record.edge_dialect_program
        edge = edge["forward"] if isinstance(edge, dict) else edge
        comparator = _comparator(metric, program_dim_orders(edge.graph_module))
        inspector = Inspector(etdump_path=str(etdump), etrecord=record, debug_buffer_path=str(debug_buffer))
        df = inspector.calculate_numeric_gap(distance=comparator, reference_graph=REFERENCE_GRAPH)
    pairs = [tp for _, row in df.iterrows() if (tp := _pair(row, comparator.fixed)) is not None]
    report = map_to_final(pairs, final, metric)
    report.reference_graph = REFERENCE_GRAPH
    skipped = len(df) - len(pairs)
    if skipped:
        report.notes.append(f"{skipped} matched outputs were not single tensors of equal shape and are left out")
    return report
