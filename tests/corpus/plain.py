"""Plain ExecuTorch on one model, as a user without this tool would run it: export, PT2E
quantization with CortexMQuantizer (calibrated on the example inputs, as ExecuTorch's tester
does), to_edge, `CortexMPassManager(...).transform()`. The reference the corpus test and
bench/reasons_corpus.py compare the project's lowering with."""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class PlainResult:
    status: str                               # done | failed
    stage: str = ""                           # where it failed
    error: str = ""
    non_cortex_m: dict[str, str] = field(default_factory=dict)   # node name -> target
    seconds: float = 0.0


def plain_lower(model, inputs: tuple, target: str = "cortex-m55") -> PlainResult:
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    from executorch.exir import to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from backend_core.common.snapshot.capture import target_name

    cpu = getattr(CortexM, target.replace("cortex-", "").upper())
    t0 = time.perf_counter()
    stage = "float export"
    try:
        gm = torch.export.export(model, inputs).module(check_guards=False)
        stage = "quantized"
        prepared = prepare_pt2e(gm, CortexMQuantizer())
        prepared(*inputs)
        converted = convert_pt2e(prepared)
        stage = "edge"
        edge = to_edge(torch.export.export(converted, inputs), compile_config=cortex_m_edge_compile_config())
        stage = "passes"
        ep = CortexMPassManager(edge.exported_program(),
                                target_config=CortexMTargetConfig(cpu=cpu)).transform()
    except Exception as e:  # noqa: BLE001 - a failure is a result to compare
        return PlainResult("failed", stage, f"{type(e).__name__}: {str(e)[:300]}",
                           seconds=time.perf_counter() - t0)
    ops = {n.name: target_name(n.target) for n in ep.graph.nodes
           if n.op == "call_function" and not target_name(n.target).startswith("cortex_m.")}
    return PlainResult("done", non_cortex_m=ops, seconds=time.perf_counter() - t0)
