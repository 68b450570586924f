"""Node label lines and box sizes, in points.

The app draws the labels itself and dot only gets fixed-size boxes, so both must agree on the
metrics here (`LINE_H`, `PAD_Y` are imported by the canvas items).
"""
from __future__ import annotations

from typing import Iterable

from backend_core.common.snapshot.model import KIND_WEIGHT, NodeSnapshot

CHAR_W_TITLE = 7.0    # average glyph width (points) of the first label line (11 px bold)
CHAR_W = 5.8          # ... of the other lines (10 px)
LINE_H = 14.0         # line height (points) of node labels
PAD_X = 14.0
PAD_Y = 8.0
MIN_W, MAX_W = 96.0, 300.0
MAX_CHARS = int((MAX_W - 2 * PAD_X) / CHAR_W_TITLE)


def short_op(n: NodeSnapshot) -> str:
    """`cortex_m.quantized_conv2d.default` -> `cortex_m.quantized_conv2d`; placeholders by name."""
    if n.fx_op in ("placeholder", "get_attr", "output"):
        return n.name
    parts = n.target.split(".")
    if len(parts) >= 3 and parts[-1] in ("default", "Tensor", "Scalar", "out", "int", "dim", "self",
                                         "input", "Tensor_mode", "Scalar_mode", "using_ints"):
        parts = parts[:-1]
    if parts and parts[0] == "quantized_decomposed":
        parts[0] = "qd"                       # the PT2E q/dq namespace, shortened to fit
    return ".".join(parts)


def tensor_text(dtype: str | None, shape: Iterable[int] | None) -> str:
    s = "" if shape is None else "[" + ",".join(str(d) for d in shape) + "]"
    return f"{dtype or '?'}{s}" if (dtype or s) else ""


def clip(text: str, n: int = MAX_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def node_lines(n: NodeSnapshot, aux: list[NodeSnapshot]) -> list[str]:
    lines = [clip(short_op(n))]
    t = tensor_text(n.dtype, n.shape)
    if t:
        lines.append(clip(t))
    if aux:
        parts = [tensor_text(a.dtype, a.shape) if a.kind == KIND_WEIGHT else "scratch" for a in aux]
        lines.append(clip("+ " + ", ".join(parts)))
    return lines


def box_size(lines: list[str], min_w: float = MIN_W) -> tuple[float, float]:
    w = max(len(s) * (CHAR_W_TITLE if i == 0 else CHAR_W) for i, s in enumerate(lines)) + 2 * PAD_X
    return max(min_w, min(MAX_W, w)), len(lines) * LINE_H + 2 * PAD_Y

