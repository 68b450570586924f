"""Synthetic transformer-like snapshots for layout benchmarks and tests."""
from __future__ import annotations

from backend_core.common.snapshot.model import (KIND_CMSIS, KIND_FALLBACK, KIND_INPUT, EdgeSnapshot, GraphSnapshot,
                              NodeSnapshot)


def synthetic_snapshot(n_nodes: int = 5000, block: int = 50) -> GraphSnapshot:
    """A transformer-like chain of residual blocks, `block` nodes each, for benchmarks/tests."""
    nodes: list[NodeSnapshot] = [NodeSnapshot("x", "x", "placeholder", "x", KIND_INPUT, "float32", (1, 64))]
    edges: list[EdgeSnapshot] = []
    prev = "x"
    i = 0
    b = 0
    while len(nodes) < n_nodes:
        block_in = prev
        for k in range(block):
            if len(nodes) >= n_nodes:
                break
            sub = ("attn", "mlp")[k * 2 // block]
            path = f"layers.{b}.{sub}.{k % 5}"
            nid = f"op_{i}"
            kind = KIND_FALLBACK if i % 997 == 500 else KIND_CMSIS
            target = "aten.mul.Tensor" if kind == KIND_FALLBACK else "cortex_m.quantized_linear.default"
            ins = (prev,) if k % 7 else (prev, block_in)
            nodes.append(NodeSnapshot(nid, nid, "call_function", target, kind, "int8", (1, 64),
                                      inputs=ins, module_path=path, module_type="Linear"))
            for j, s in enumerate(ins):
                edges.append(EdgeSnapshot(s, nid, j, "int8", (1, 64)))
            prev = nid
            i += 1
        b += 1
    return GraphSnapshot("synthetic", 0, "final", tuple(nodes), tuple(edges))
