"""What a portable fallback costs, in the words a fallback reason ends with: the bytes a pad, permute or
repeat copies when it missed the backend's own kernel, and the float island's bytes against int8's."""
from __future__ import annotations

from typing import Any

from backend_core.common.snapshot.classify import KERNEL_BACKED_MOVES
from backend_core.common.snapshot.model import NodeSnapshot


def element_count(shape: Any) -> int:
    numel = 1
    for d in shape or ():
        numel *= int(d)
    return numel


def move_cost(node: NodeSnapshot, base: str) -> str:
    """For a pad, permute or repeat left on a portable kernel: the backend's own kernel it missed (used for
    an int8 input only: aten_to_cortex_m_pass) and the bytes it copies."""
    if base not in KERNEL_BACKED_MOVES:
        return ""
    kernel = KERNEL_BACKED_MOVES[base]
    numel = element_count(node.shape)
    size = 4 if (node.dtype or "").startswith("float") else 1
    missed = (f" The Cortex-M backend has {kernel} for it, which AtenToCortexMPass uses only when the input "
              f"is int8 with quantization parameters; this one's output is {node.dtype or 'float'}, so a portable "
              "kernel copies it element by element." if kernel else " It copies its input once per repetition.")
    return missed + (f" Cost: it writes {numel * size:,} B ({list(node.shape)})." if node.shape else "")


def island_cost(node: NodeSnapshot) -> str:
    """The float island's memory cost, from the node's output: float32 bytes against the int8 ones a
    quantized kernel would write (its instructions: `cmlens profile` on the target)."""
    if not node.shape or not (node.dtype or "").startswith("float"):
        return ""
    numel = element_count(node.shape)
    return (f" Cost: a float island (dequantize, this op in fp32, quantize): its output {list(node.shape)} takes "
            f"{numel * 4:,} B in float32 instead of {numel:,} B in int8, and it runs on a portable fp32 kernel "
            "instead of CMSIS-NN (`cmlens profile` counts its instructions on the target).")
