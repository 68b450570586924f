"""The ExecuTorch side of per-layer gaps: a .bpte and its ETRecord from ONE lowering, and
`Inspector.calculate_numeric_gap` over the runner's ETDump + debug buffer.

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
  outputs are channels-last: without re-reading them in the host tensor's dim order every conv shows a
  huge gap (MSE ~2500 LSB²) while the bytes are identical."""
from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..snapshot.model import GraphSnapshot
from .errors import BadInputError
from .gaps import METRICS, GapReport, TensorPair, map_to_final

REFERENCE_GRAPH = "edge_dialect_exported_program"


@dataclass
class LoweredWithRecord:
    bpte: Path
    etrecord: Path
    final: GraphSnapshot
    seconds: float


def lower_with_etrecord(source: str, target: str, flow: str, workdir: Path,
                        on_status: Callable[[str], None] | None = None) -> LoweredWithRecord:
    """Lower `source` (no cache: live programs are needed), write `<model>.bpte` and `etrecord.bin`."""
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.devtools import generate_etrecord
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeProgramManager

    from ..lowering import lower
    from ..pipeline.artifacts import bundle_layout
    from ..pipeline import PipelineOptions

    say = on_status or (lambda _s: None)
    start = time.monotonic()
    res = lower(source, PipelineOptions(target=target, flow=flow), use_cache=False, keep_programs=True,
                on_status=say)
    if res.status != "done" or res.pipeline is None or res.final is None:
        err = res.error or {}
        raise BadInputError(f"Lowering {source} failed at {err.get('stage', '?')}: {err.get('message', res.status)}",
                            err.get("hint", ""), detail=err.get("traceback", ""))
    pipe = res.pipeline
    say("serialising the .bpte and its ETRecord")
    inputs = pipe.example_inputs
    with torch.no_grad():
        expected = pipe.quantized_module(*inputs)
    expected = (expected,) if isinstance(expected, torch.Tensor) else tuple(expected)
    # to_executorch() mutates its input: one copy runs, another stays for the ETRecord's edge graph.
    edge = EdgeProgramManager({"forward": copy.deepcopy(pipe.final_program)},
                              compile_config=cortex_m_edge_compile_config())
    edge_for_record = copy.deepcopy(edge)
    bundled = BundledProgram(edge.to_executorch(), [MethodTestSuite("forward", [
        MethodTestCase(inputs=bundle_layout(inputs), expected_outputs=bundle_layout(expected))])])
    workdir.mkdir(parents=True, exist_ok=True)
    bpte = workdir / f"{res.model}.bpte"
    bpte.write_bytes(serialize_from_bundled_program_to_flatbuffer(bundled))
    etrecord = workdir / "etrecord.bin"
    generate_etrecord(str(etrecord), edge_dialect_program=edge_for_record, executorch_program=bundled)
    return LoweredWithRecord(bpte, etrecord, res.final, time.monotonic() - start)


def match_layout(aot: Any, runtime: Any) -> tuple[Any, bool]:
    """Re-read a contiguous runtime tensor in the dim order of the host tensor (see module docstring)."""
    import torch

    if not (isinstance(aot, torch.Tensor) and isinstance(runtime, torch.Tensor)):
        return runtime, False
    if aot.shape != runtime.shape or aot.is_contiguous() or not runtime.is_contiguous() or aot.dim() < 2:
        return runtime, False
    order = sorted(range(aot.dim()), key=lambda i: -aot.stride(i))      # stable: ties keep index order
    inverse = [order.index(i) for i in range(aot.dim())]
    fixed = runtime.reshape([aot.shape[i] for i in order]).permute(inverse)
    return fixed, True


def _single(x: Any) -> Any:
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return x[0]
    return x


def _comparator(metric: str) -> Any:
    """The Inspector's own comparator for `metric` with our layout fix as its preprocessing step."""
    from executorch.devtools.inspector.numerical_comparator import (
        L1Comparator, MSEComparator, SNRComparator)

    base = {"MSE": MSEComparator, "L1": L1Comparator, "SNR": SNRComparator}[metric]

    class LayoutAware(base):  # type: ignore[misc, valid-type]
        def preprocessing(self, mapping: dict) -> dict:
            self.fixed: set[tuple[int, ...]] = set()
            out = {}
            for (ah, a), (rh, r) in mapping.items():
                r2, did = match_layout(_single(a), _single(r))
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

    comparator = _comparator(metric)
    with warnings.catch_warnings():   # torch.frombuffer on the read-only debug buffer: harmless, we only read
        warnings.filterwarnings("ignore", message="The given buffer is not writable")
        inspector = Inspector(etdump_path=str(etdump), etrecord=str(etrecord), debug_buffer_path=str(debug_buffer))
        df = inspector.calculate_numeric_gap(distance=comparator, reference_graph=REFERENCE_GRAPH)
    pairs = [p for _, row in df.iterrows() if (p := _pair(row, comparator.fixed)) is not None]
    report = map_to_final(pairs, final, metric)
    report.reference_graph = REFERENCE_GRAPH
    skipped = len(df) - len(pairs)
    if skipped:
        report.notes.append(f"{skipped} matched outputs were not single tensors of equal shape and are left out")
    return report
