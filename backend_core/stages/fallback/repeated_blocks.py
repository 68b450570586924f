"""The same op at the same place in every instance of a repeated block: what --keep-going takes out of
quantisation together, so one cause costs one round.

Why: a model repeats its blocks (ATCNet's sliding-window attention: one `_MHA` per window; a transformer's
layers), and an ExecuTorch pass that fails on one block's op fails on the same op of the next block in the
next round. Each round re-quantizes and re-lowers the whole model (minutes for ATCNet): braindecode's ATCNet
took 8 rounds for 10 quarantined ops, one attention block after the other. Twins are matched on the
quantized graph (names at quantisation time, the quarantine's key): same target, same module class, a module
path that differs only in its indices, and the same rank among that module's nodes of that target."""
from __future__ import annotations

import re

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

_INDEX = re.compile(r"\d+")


def _pattern(path: str) -> str:
    return _INDEX.sub("#", path)


def block_twins(quantized: GraphSnapshot | None, name: str) -> list[str]:
    """Names (at quantisation time) of the ops at `name`'s place in the other instances of its block; [] when
    it is in no repeated block (no module path with an index)."""
    if quantized is None:
        return []
    node = quantized.node(name)
    if node is None or not node.module_path or not _INDEX.search(node.module_path):
        return []
    want = (node.target, node.module_type, _pattern(node.module_path))
    by_block: dict[str, list[NodeSnapshot]] = {}
    for n in quantized.nodes:
        if n.fx_op == "call_function" and (n.target, n.module_type, _pattern(n.module_path)) == want:
            by_block.setdefault(n.module_path, []).append(n)
    rank = [n.id for n in by_block[node.module_path]].index(node.id)
    return [ns[rank].name for path, ns in by_block.items()
            if path != node.module_path and len(ns) == len(by_block[node.module_path])]
