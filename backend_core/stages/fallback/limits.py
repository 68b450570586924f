"""Name the limit a Cortex-M quantizer pattern check hit, from the checker's code and the node.

The QuantizerReporter only says "Tried annotating unsupported configuration of operators". The
checkers (executorch/backends/cortex_m/quantizer/pattern_checkers.py) each test a few concrete
things: tensor layout, broadcast shapes, alpha, softmax dim, output_padding/groups/dilation,
divisor_override, bmm ranks. This module re-reads the same facts from the live node at
quantization time (its fake tensors and arguments) and says which test failed, in words.
Runs inside the pipeline (it needs the live FX graph); the result is plain data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REJECT_PATTERN = "Tried annotating unsupported configuration of operators"
REJECT_QCONFIG = "Tried annotating unsupported quantization config"
REJECT_LARGE_SCALAR = "large constant scalar"


@dataclass(frozen=True)
class Limit:
    text: str                 # what was hit, with the node's own values
    layout: bool = False      # the limit is the tensor layout (NCHW where NHWC is needed)
    node: str | None = None   # the one node of the pattern it is about (None: the pattern as a whole)


def _fake(node: Any) -> Any:
    val = node.meta.get("val") if hasattr(node, "meta") else None
    if isinstance(val, (list, tuple)):
        val = val[0] if val else None
    return val


def _inputs(node: Any) -> list[Any]:
    """The node's tensor inputs as the checker saw them: prepare_pt2e has since put observer
    modules (no fake tensor) between nodes, so step through those to the real producer."""
    out = []
    for a in node.all_input_nodes:
        for _ in range(4):
            if a.op == "call_module" and a.args and hasattr(a.args[0], "op"):
                a = a.args[0]
            else:
                break
        out.append(a)
    return out


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _is_cl(t: Any) -> bool:
    from executorch.backends.cortex_m.passes.passes_utils import is_channels_last

    return bool(is_channels_last(t))


def _layout_word(t: Any) -> str:
    if t is None or t.dim() != 4:
        return f"rank {t.dim() if t is not None else '?'}"
    return "channels_last" if _is_cl(t) else "NCHW (contiguous)"


def _add_mul(node: Any) -> list[Limit]:
    from executorch.backends.cortex_m.passes.passes_utils import is_foldable_alpha

    out: list[Limit] = []
    alpha = node.kwargs.get("alpha", 1)
    if not is_foldable_alpha(alpha):
        out.append(Limit(f"alpha={alpha!r} is not an integer: quantized_add folds only an integer alpha "
                         "into an operand multiplier"))
    ins = _inputs(node)
    if len(ins) == 2:
        t1, t2 = _fake(ins[0]), _fake(ins[1])
        if t1 is not None and t2 is not None and _shape(t1) != _shape(t2):
            if _channel_pattern(t1, t2) and not (_is_cl(t1) and _is_cl(t2)):
                out.append(Limit(f"per-channel broadcast {list(_shape(t1))} with {list(_shape(t2))} on an "
                                 f"{_layout_word(t1)} tensor: the kernel broadcasts over channels only "
                                 "when the tensor is channels_last", layout=True))
            else:
                out.append(Limit(f"broadcast shape {list(_shape(t1))} with {list(_shape(t2))}: the kernel "
                                 "needs equal shapes, or a per-channel broadcast ([N,C,H,W] with [1,C,1,1]) "
                                 "on a channels_last tensor"))
    return out


def _channel_pattern(t1: Any, t2: Any) -> bool:
    """is_channel_broadcast's shape test without its channels_last test (that is the layout part)."""
    if t1.dim() != t2.dim() or t1.dim() < 2 or t1.size(1) != t2.size(1):
        return False
    return t1.numel() == t1.size(1) or t2.numel() == t2.size(1)


def _div(node: Any) -> list[Limit]:
    ins = _inputs(node)
    if len(ins) == 2:
        t1, t2 = _fake(ins[0]), _fake(ins[1])
        if t1 is not None and t2 is not None and _shape(t1) != _shape(t2):
            return [Limit(f"broadcast shape {list(_shape(t1))} with {list(_shape(t2))}: quantized div "
                          "accepts identically shaped inputs only")]
    return []


def _conv(pattern: list[Any]) -> list[Limit]:
    out = []
    for node in pattern:
        t = _fake(node)
        if t is not None and not _is_cl(t):
            what = "output" if node is pattern[0] else f"{node.name} output"
            out.append(Limit(f"the conv's {what} tensor {list(_shape(t))} is {_layout_word(t)}: the legacy "
                             "flow's conv check needs channels_last tensors", layout=True))
    return out


def _explicit_conv(pattern: list[Any], rank: int) -> list[Limit]:
    out = []
    for node in pattern:
        t = _fake(node)
        if t is not None and t.dim() != rank:
            out.append(Limit(f"{node.name} is rank {t.dim()}: the explicit-layout check takes rank {rank}"))
    return out


def _softmax(node: Any) -> list[Limit]:
    t = _fake(node)
    if t is None:
        return []
    rank = t.dim()
    dim = node.args[1] % rank if len(node.args) > 1 else rank - 1
    if _is_cl(t) and dim != 1:
        return [Limit(f"softmax over dim {dim} of a channels_last rank-{rank} tensor {list(_shape(t))}: "
                      "CMSIS-NN softmax runs over the innermost memory dim, the channel dim (1) here")]
    if not _is_cl(t) and dim != rank - 1:
        return [Limit(f"softmax over dim {dim} of a rank-{rank} tensor {list(_shape(t))}: CMSIS-NN softmax "
                      f"runs over the last dim ({rank - 1}) of a contiguous tensor")]
    return []


def _conv_transpose(node: Any, require_cl: bool = True) -> list[Limit]:
    out = []
    t = _fake(node)
    if require_cl and t is not None and not _is_cl(t):
        out.append(Limit(f"output tensor {list(_shape(t))} is {_layout_word(t)}: the legacy flow's "
                         "transposed-conv check needs channels_last", layout=True))
    a = node.args
    if len(a) >= 6 and isinstance(a[5], (list, tuple)) and any(p != 0 for p in a[5]):
        out.append(Limit(f"output_padding={list(a[5])}: CMSIS-NN transposed conv has no output_padding"))
    if len(a) >= 7 and isinstance(a[6], int) and a[6] > 1:
        out.append(Limit(f"groups={a[6]}: CMSIS-NN transposed conv takes groups=1 only"))
    if len(a) >= 8 and isinstance(a[7], (list, tuple)) and any(d != 1 for d in a[7]):
        out.append(Limit(f"dilation={list(a[7])}: CMSIS-NN transposed conv takes dilation 1 only"))
    return out


def _avg_pool(node: Any) -> list[Limit]:
    div = node.args[6] if len(node.args) > 6 else None
    if div is not None:
        return [Limit(f"divisor_override={div}: arm_avgpool_s8 always divides by the window size")]
    return []


def _bmm(node: Any) -> list[Limit]:
    ins = _inputs(node)
    if len(ins) != 2:
        return []
    t1, t2 = _fake(ins[0]), _fake(ins[1])
    if t1 is None or t2 is None:
        return []
    s1, s2 = list(_shape(t1)), list(_shape(t2))
    if t1.dim() != 3 or t2.dim() != 3:
        return [Limit(f"bmm of rank {t1.dim()} and {t2.dim()} tensors {s1} x {s2}: the kernel takes rank 3")]
    if s1[0] != s2[0]:
        return [Limit(f"bmm batch sizes differ ({s1} x {s2}): the kernel does not broadcast the batch")]
    if s1[2] != s2[1]:
        return [Limit(f"bmm inner dims differ ({s1} x {s2})")]
    return []


def pattern_limits(pattern: list[Any], checker: type | None) -> list[Limit]:
    """The limits a rejected pattern hit, by the checker class that rejected it."""
    if checker is None or not pattern:
        return []
    name = checker.__name__
    head = pattern[0]
    if name == "CortexMAddMulCheck":     # each node's own operands: never a neighbour's broadcast
        return [Limit(lim.text, lim.layout, n.name) for n in pattern for lim in _add_mul(n)]
    if name == "CortexMDivCheck":
        return _div(head)
    if name == "CortexMConv2DCheck":
        return _conv(pattern)
    if name == "CortexMExplicitConv2DCheck":
        return _explicit_conv(pattern, 4)
    if name == "CortexMExplicitConv1DCheck":
        return _explicit_conv(pattern, 3)
    if name == "CortexMSoftmaxCheck":
        return _softmax(head)
    if name == "CortexMConvTranspose2DCheck":
        return _conv_transpose(head)
    if name == "CortexMExplicitConvTranspose2DCheck":
        return _conv_transpose(head, require_cl=False)
    if name == "CortexMAvgPool2DCheck":
        return _avg_pool(head)
    if name == "CortexMBmmCheck":
        return _bmm(head)
    return []


def qconfig_limit(pattern: list[Any], checker: Any, qconfig_label: str) -> Limit:
    """Words for REJECT_UNSUPPORTED_QCONFIG: the checker's own docstring says what it accepts."""
    doc = (checker.check_quantization_config.__doc__ or "").strip().splitlines() if checker else []
    accepts = " ".join(line.strip() for line in doc).strip()
    if accepts.lower().startswith("checks that "):
        accepts = "the checker requires that " + accepts[len("checks that "):]
    accepts = accepts or "the checker accepts a different quantization config"
    return Limit(f"quantization config {qconfig_label.rsplit('.', 1)[-1]} on {pattern[0].target}: {accepts}")


def checker_for(pattern: list[Any], explicit: bool) -> type | None:
    from executorch.backends.cortex_m.quantizer.quantizer_support import (
        CORTEX_M_EXPLICIT_LAYOUT_QUANTIZER_SUPPORT_DICT, CORTEX_M_QUANTIZER_SUPPORT_DICT)

    table = CORTEX_M_EXPLICIT_LAYOUT_QUANTIZER_SUPPORT_DICT if explicit else CORTEX_M_QUANTIZER_SUPPORT_DICT
    return table.get(tuple(n.target for n in pattern))
