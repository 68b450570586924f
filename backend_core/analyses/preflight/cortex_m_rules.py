"""Rules on the cortex_m kernels themselves: the layout checks in ExecuTorch's
backends/cortex_m/ops/*.cpp. CMSIS-NN's conv and pooling kernels index NHWC memory, so these ops
reject a tensor that is not channels-last at run time (InvalidArgument, the method fails). Found on
QEMU M55: `y.contiguous().mean(dim=(2, 3))` lowers to cortex_m::quantized_avg_pool2d on a contiguous
tensor and the runner stops with "quantized_avg_pool2d_out: tensors must use channels_last dimension
order"."""
from __future__ import annotations

from dataclasses import dataclass

from backend_core.common.finding import WILL_FAIL, Finding
from backend_core.analyses.preflight.dim_order import describe
from backend_core.analyses.preflight.kernel_rules import ON_TARGET, TensorArg, _where, call_tensor_args
from backend_core.analyses.preflight.program_view import ProgramView

_OPS = "backends/cortex_m/ops/"


@dataclass(frozen=True)
class LayoutCheck:
    op: str                       # cortex_m op name (the snapshot target without overload)
    args: tuple[str, ...]         # schema argument names checked ("out": the result)
    source: str                   # file:line of the check in the checkout
    skip_single_channel: bool = False   # conv2d checks only when size(1) > 1


CHECKS = (
    LayoutCheck("quantized_avg_pool2d", ("input", "out"), _OPS + "cortex_m_ops_common.h:232"),
    LayoutCheck("quantized_max_pool2d", ("input", "out"), _OPS + "cortex_m_ops_common.h:232"),
    LayoutCheck("quantized_conv2d", ("input", "out"), _OPS + "op_quantized_conv2d.cpp:38",
                skip_single_channel=True),
    LayoutCheck("quantized_depthwise_conv2d", ("input", "out"), _OPS + "op_quantized_depthwise_conv2d.cpp:69"),
    LayoutCheck("quantized_transpose_conv2d", ("input", "out"), _OPS + "op_quantized_transpose_conv2d.cpp:35"),
)


def is_channels_last_tensor(sizes: tuple[int, ...], dim_order: tuple[int, ...]) -> bool:
    """is_channels_last_tensor of cortex_m_ops_common.h, line for line: 4-D only; one channel, or 1x1
    spatial dims, is accepted whatever the dim order (the layout is ambiguous); else (0, 2, 3, 1)."""
    if len(sizes) != 4:
        return False
    if sizes[1] == 1 or (sizes[2] == 1 and sizes[3] == 1):
        return True
    return tuple(dim_order) == (0, 2, 3, 1)


def cmsis_channels_last(t: TensorArg, skip_single_channel: bool = False) -> bool:
    """The op's check on one tensor (quantized_conv2d tests only tensors with size(1) > 1)."""
    if t.shape is None or t.dim_order is None:
        return True                       # nothing known: no claim
    if skip_single_channel and len(t.shape) > 1 and t.shape[1] <= 1:
        return True
    return is_channels_last_tensor(tuple(t.shape), tuple(t.dim_order))


def cortex_m_findings(view: ProgramView) -> list[Finding]:
    """A finding for every cortex_m conv/pool call whose input or output is not channels-last in the
    serialised program."""
    by_op = {f"cortex_m::{c.op}": c for c in CHECKS}
    findings: list[Finding] = []
    for call in view.calls:
        check = by_op.get(call.op)
        if check is None:
            continue
        args = call_tensor_args(view, call)
        tensors = [t for name in check.args for t in args.get(name, [])[:1]]
        bad = [t for t in tensors if not cmsis_channels_last(t, check.skip_single_channel)]
        if not bad:
            continue
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)} {list(t.shape or ())}" for t in bad)
        op = call.target or call.name
        findings.append(Finding(
            node=call.where, rule="cmsis-needs-channels-last",
            message=(f"The CMSIS-NN kernel of {op} reads NHWC memory and checks that its tensors are "
                     f"channels-last, but in the program {parts}. {ON_TARGET}"),
            fix=("Keep the tensor channels-last up to this op: remove the `.contiguous()` (or "
                 "`.to(memory_format=torch.contiguous_format)`) before it, or convert back with "
                 "`.to(memory_format=torch.channels_last)` right before the op."),
            certainty=WILL_FAIL, op=op, source=check.source,
            evidence=tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())} {describe(t.dim_order)}"
                           for t in tensors) + _where(call)
            + (f"check: is_channels_last_tensor at ExecuTorch {check.source}",)))
    return findings


# validate_cmsis_nn_tensor_requirements (cortex_m_ops_common.h) ET_CHECKs that both operands and the
# result are int8 before calling CMSIS-NN: a float operand aborts the runner. ExecuTorch's passes let a
# float constant through (torch.zeros in forward, a quantizable LSTM's zero initial state).
INT8_OPERANDS = {"cortex_m::quantized_add": ("self", "other", "out"),
                 "cortex_m::quantized_mul": ("self", "other", "out"),
                 # op_quantized_div.cpp:90 calls the same validator with the output's dtype (int8 or int16,
                 # else :79 fails): a float operand aborts alike (braindecode ATCNet after --keep-going left an
                 # attention bmm in float before the `/ sqrt(d)`)
                 "cortex_m::quantized_div": ("self", "other", "out"),
                 # prepare_cmsis_pool2d_config (cortex_m_ops_common.h:214): "tensors must be int8", InvalidArgument
                 # (MONAI DenseNet after --keep-going: its last norm and relu in float before the global pool)
                 "cortex_m::quantized_avg_pool2d": ("input", "out"),
                 "cortex_m::quantized_max_pool2d": ("input", "out")}
_INT8_AT = {"cortex_m::quantized_avg_pool2d": _OPS + "cortex_m_ops_common.h:214",
            "cortex_m::quantized_max_pool2d": _OPS + "cortex_m_ops_common.h:214"}
_INT8_CHECK = {op: "prepare_cmsis_pool2d_config" for op in _INT8_AT}
_WIDE = {"cortex_m::quantized_div": ("int8", "int16")}     # the dtypes a kernel validates against (its out's)
INT8_SOURCE = _OPS + "cortex_m_ops_common.h:48"


def int8_operand_findings(view: ProgramView) -> list[Finding]:
    """A finding for every cortex_m add/mul/div call with an operand or result that is not int8 (div: not the
    dtype of its int8 or int16 result)."""
    findings: list[Finding] = []
    for call in view.calls:
        names = INT8_OPERANDS.get(call.op)
        if names is None:
            continue
        args = call_tensor_args(view, call)
        tensors = [t for name in names for t in args.get(name, [])[:1]]
        out_dtype = tensors[-1].dtype if tensors else None
        want = out_dtype if out_dtype in _WIDE.get(call.op, ()) else "int8"
        bad = [t for t in tensors if t.dtype is not None and t.dtype != want]
        if not bad:
            continue
        op = call.target or call.name
        parts = ", ".join(f"{t.name} is {t.dtype} (%{t.node})" for t in bad)
        findings.append(Finding(
            node=call.where, rule="cmsis-needs-int8",
            message=(f"The CMSIS-NN kernel of {op} checks that its input tensors and its result are int8 and aborts "
                     f"otherwise, but in the program {parts}: ExecuTorch rewrote the op although an operand was "
                     f"never quantized (a float constant such as torch.zeros made in forward()). {ON_TARGET}"),
            fix=("Make the operand a quantized tensor (a registered buffer the quantizer sees, or the output of a "
                 "quantized op), or keep the op in float (cmlens lower --keep-going does that)."),
            certainty=WILL_FAIL, op=op, source=_INT8_AT.get(call.op, INT8_SOURCE),
            evidence=tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())}" for t in tensors) + _where(call)
            + (f"check: {_INT8_CHECK.get(call.op, 'validate_cmsis_nn_tensor_requirements')} "
               f"at ExecuTorch {_INT8_AT.get(call.op, INT8_SOURCE)}",)))
    return findings


# cortex_m::transpose (op_transpose.cpp) and the element-wise add/mul (op_quantized_add/mul.cpp) hand
# CMSIS-NN raw buffers with the logical sizes: nothing reads the dim order (cortex_m_ops_common.h:72 is
# "TBD (#16032): Validate dim_order"). A channels-last operand is then read as NCHW: no error, wrong values.
# Found on QEMU M55 on timm EfficientViT's window reverse (tests/preflight/models/mixed_layout_add.py).
DIM_ORDER_BLIND = {"cortex_m::transpose": (("input", "out"), _OPS + "op_transpose.cpp:104"),
                   "cortex_m::quantized_add": (("self", "other", "out"), _OPS + "op_quantized_add.cpp:112"),
                   "cortex_m::quantized_mul": (("self", "other", "out"), _OPS + "op_quantized_mul.cpp:95")}


def memory_order(shape: tuple[int, ...], dim_order: tuple[int, ...]) -> tuple[int, ...]:
    """The dims that are laid out in memory, outermost first, without the size-1 ones: two tensors of the
    same sizes hold their elements at the same offsets exactly when these agree."""
    return tuple(d for d in dim_order if shape[d] != 1)


def _default_order(t: TensorArg) -> bool:
    assert t.shape is not None and t.dim_order is not None
    return memory_order(t.shape, t.dim_order) == memory_order(t.shape, tuple(range(len(t.shape))))


def dim_order_blind_findings(view: ProgramView) -> list[Finding]:
    """A finding for every cortex_m transpose whose input or output is not in the default dim order, and
    every same-sized element-wise add/mul whose operands and result are not laid out alike."""
    findings: list[Finding] = []
    for call in view.calls:
        spec = DIM_ORDER_BLIND.get(call.op)
        if spec is None:
            continue
        names, source = spec
        args = call_tensor_args(view, call)
        tensors = [t for name in names for t in args.get(name, [])[:1]]
        if any(t.shape is None or t.dim_order is None for t in tensors):
            continue                                     # nothing known: no claim
        if call.op == "cortex_m::transpose":
            bad = [t for t in tensors if not _default_order(t)]
        else:
            if len({tuple(t.shape or ()) for t in tensors}) != 1:
                continue                                 # a broadcast: another check (channels-last) applies
            orders = {memory_order(tuple(t.shape or ()), tuple(t.dim_order or ())) for t in tensors}
            bad = [t for t in tensors if not _default_order(t)] if len(orders) > 1 else []
        if not bad:
            continue
        op = call.target or call.name
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)} {list(t.shape or ())} (%{t.node})" for t in bad)
        findings.append(Finding(
            node=call.where, rule="cmsis-ignores-dim-order",
            message=(f"The CMSIS-NN kernel of {op} reads and writes its buffers by the logical sizes and "
                     f"ignores the dim order (ExecuTorch does not check it: cortex_m_ops_common.h:72), but in the "
                     f"program {parts}, so the elements are read in the wrong order. On the target the method "
                     f"runs without an error and gives wrong values."),
            fix=("Give every kernel the layout it assumes: `.contiguous()` before a permute of a channels-last "
                 "tensor, and `.clone(memory_format=torch.channels_last)` after a permute whose result meets "
                 "channels-last tensors (not `.contiguous(memory_format=...)`: the permute's result already has "
                 "channels-last strides in eager, so export records nothing). cmlens lower --keep-going makes both "
                 "changes on a copy of the export."),
            certainty=WILL_FAIL, op=op, source=source,
            evidence=tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())} {describe(t.dim_order)}"
                           for t in tensors) + _where(call)
            + (f"no dim-order check: ExecuTorch {_OPS}cortex_m_ops_common.h:72; kernel call at {source}",)))
    return findings


# op_transpose.cpp:44 fails the call (InvalidArgument) for a rank above 4 (kMaxSupportedDims), but
# ExecuTorch's AtenToCortexMPass rewrites every int8 permute_copy into cortex_m::transpose whatever its
# rank: a window partition's 6-D transpose (timm EfficientViT) stops the method on the target.
TRANSPOSE_MAX_RANK = 4
TRANSPOSE_RANK_SOURCE = _OPS + "op_transpose.cpp:44"


def transpose_rank_findings(view: ProgramView) -> list[Finding]:
    """A finding for every cortex_m transpose of more than 4 dims."""
    findings: list[Finding] = []
    for call in view.calls:
        if call.op != "cortex_m::transpose":
            continue
        tensors = call_tensor_args(view, call).get("input", [])[:1]
        if not tensors or tensors[0].shape is None or len(tensors[0].shape) <= TRANSPOSE_MAX_RANK:
            continue
        t = tensors[0]
        op = call.target or call.name
        findings.append(Finding(
            node=call.where, rule="cmsis-unsupported-rank",
            message=(f"The CMSIS-NN transpose kernel ({op}) takes at most {TRANSPOSE_MAX_RANK} dims, but ExecuTorch "
                     f"rewrote a {len(t.shape)}-D permute into it (input {list(t.shape)}): the kernel logs "
                     f"\"transpose_out: expected tensor rank in [1, 4], got {len(t.shape)}\". {ON_TARGET}"),
            fix=("Make the permute on a view with at most 4 dims: merge the dims that stay next to each other (a "
                 "window partition `x.view(B, nH, ws, nW, ws, C).transpose(2, 3)` is "
                 "`x.reshape(B * nH, ws, nW, ws * C).transpose(1, 2)` viewed back); cmlens lower --keep-going makes "
                 "that change on a copy of the export."),
            certainty=WILL_FAIL, op=op, source=TRANSPOSE_RANK_SOURCE,
            evidence=(f"input = %{t.node}: {t.dtype} {list(t.shape)} ({len(t.shape)}-D)",) + _where(call)
            + (f"check: rank in [1, {TRANSPOSE_MAX_RANK}] at ExecuTorch {TRANSPOSE_RANK_SOURCE}",)))
    return findings
