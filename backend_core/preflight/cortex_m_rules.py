"""Rules on the cortex_m kernels themselves: the layout checks in ExecuTorch's
backends/cortex_m/ops/*.cpp. CMSIS-NN's conv and pooling kernels index NHWC memory, so these ops
reject a tensor that is not channels-last at run time (InvalidArgument, the method fails). Found on
QEMU M55: `y.contiguous().mean(dim=(2, 3))` lowers to cortex_m::quantized_avg_pool2d on a contiguous
tensor and the runner stops with "quantized_avg_pool2d_out: tensors must use channels_last dimension
order"."""
from __future__ import annotations

from dataclasses import dataclass

from ..snapshot.model import GraphSnapshot, NodeSnapshot
from .dim_order import describe
from .finding import WILL_FAIL, Finding
from .kernel_rules import ON_TARGET, TensorArg, tensor_args

_OPS = "backends/cortex_m/ops/"


@dataclass(frozen=True)
class LayoutCheck:
    op: str                       # cortex_m op name (the snapshot target without overload)
    args: tuple[str, ...]         # schema argument names checked ("out": the result)
    source: str                   # file:line of the check in the checkout
    skip_single_channel: bool = False   # conv2d checks only when size(1) > 1


CHECKS = (
    LayoutCheck("quantized_avg_pool2d", ("input", "out"), _OPS + "cortex_m_ops_common.h:231"),
    LayoutCheck("quantized_max_pool2d", ("input", "out"), _OPS + "cortex_m_ops_common.h:231"),
    LayoutCheck("quantized_conv2d", ("input", "out"), _OPS + "op_quantized_conv2d.cpp:38",
                skip_single_channel=True),
    LayoutCheck("quantized_depthwise_conv2d", ("input", "out"), _OPS + "op_quantized_depthwise_conv2d.cpp:69"),
    LayoutCheck("quantized_transpose_conv2d", ("input", "out"), _OPS + "op_quantized_transpose_conv2d.cpp:35"),
)


def cmsis_channels_last(t: TensorArg, skip_single_channel: bool = False) -> bool:
    """is_channels_last_tensor of cortex_m_ops_common.h: 4-D; a tensor with one channel or 1x1 spatial
    dims is accepted whatever its dim order (the layout is ambiguous)."""
    if t.shape is None or t.dim_order is None:
        return True                       # nothing known: no claim
    if len(t.shape) != 4:
        return False
    if t.shape[1] == 1 or (t.shape[2] == 1 and t.shape[3] == 1):
        return True
    if skip_single_channel and t.shape[1] <= 1:
        return True
    return tuple(t.dim_order) == (0, 2, 3, 1)


def _op_name(node: NodeSnapshot) -> str:
    parts = node.target.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "cortex_m" else ""


def cortex_m_findings(final: GraphSnapshot) -> list[Finding]:
    """A finding for every cortex_m conv/pool node whose input or output is not channels-last."""
    by_op = {c.op: c for c in CHECKS}
    findings: list[Finding] = []
    for node in final.nodes:
        check = by_op.get(_op_name(node)) if node.fx_op == "call_function" else None
        if check is None:
            continue
        args = tensor_args(node, final)
        tensors = [t for name in check.args for t in args.get(name, [])[:1]]
        bad = [t for t in tensors if not cmsis_channels_last(t, check.skip_single_channel)]
        if not bad:
            continue
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)} {list(t.shape or ())}" for t in bad)
        findings.append(Finding(
            node=node.id, rule="cmsis-needs-channels-last",
            message=(f"The CMSIS-NN kernel of {node.target} reads NHWC memory and checks that its tensors are "
                     f"channels-last, but {parts}. {ON_TARGET}"),
            fix=("Keep the tensor channels-last up to this op: remove the `.contiguous()` (or "
                 "`.to(memory_format=torch.contiguous_format)`) before it, or convert back with "
                 "`.to(memory_format=torch.channels_last)` right before the op."),
            certainty=WILL_FAIL, op=node.target, source=check.source,
            evidence=tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())} {describe(t.dim_order)}"
                           for t in tensors) + (f"check: is_channels_last_tensor at ExecuTorch {check.source}",)))
    return findings
