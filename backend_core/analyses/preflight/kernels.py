"""What ExecuTorch's portable kernels check at run time, as data: one entry per operator (the target
as the final graph prints it), each check citing the line of `kernels/portable/cpu/` that does it.

Read from ExecuTorch main of 2026-08-22 (version 1.5.0, the checkout the target runs were built from).
Line numbers are those of the `ET_KERNEL_CHECK` / `ET_LOG_AND_RETURN_IF_FALSE` statement, which is the
line ExecuTorch logs (`op_softmax.cpp:40 softmax_out()`). When a check fails the kernel sets
InvalidArgument, the method returns status 0x12 and the runner stops: so every check below is
certain to fail when its condition is false.

Argument names are the schema's (`self`, `input`, `other`, `tensors`, ...); `out` is the node's output."""
from __future__ import annotations

from dataclasses import dataclass

SAME = "same_dim_order"          # tensors_have_same_dim_order(...): all contiguous or all channels-last
DEFAULT = "default_dim_order"    # tensor_is_default_dim_order(t): contiguous only
DEFAULT_OR_CL = "default_or_cl"  # tensor_is_default_or_channels_last_dim_order(t)
DTYPE = "dtype"                  # ET_SWITCH_*_TYPES over the argument's dtype
RANK = "rank"                    # in.dim() == N checks of the kernel's check_*_args
IGNORES_DIM_ORDER = "ignores_dim_order"  # the kernel indexes by logical sizes: wrong values unless contiguous
PAD_IGNORES_DIM_ORDER = "pad_ignores_dim_order"  # constant_pad_nd: strides from the logical sizes, any dim order

_INT = ("uint8", "int8", "int16", "int32", "int64")
_FLOAT = ("float32", "float64")
REAL = _INT + _FLOAT
REALHBF16 = REAL + ("float16", "bfloat16")
REALHBBF16 = REALHBF16 + ("bool",)
FLOATHBF16 = _FLOAT + ("float16", "bfloat16")

_P = "kernels/portable/cpu/"
_U = _P + "util/"


@dataclass(frozen=True)
class Check:
    kind: str
    args: tuple[str, ...]
    source: str                          # file:line in the ExecuTorch checkout
    dtypes: tuple[str, ...] = ()         # DTYPE checks: the dtypes the kernel's switch handles
    ranks: tuple[int, ...] = ()          # RANK checks: the ranks the kernel accepts


def _same(args: str, src: str, **kw) -> Check:
    return Check(SAME, tuple(args.split(",")), src, **kw)


def _default(arg: str, src: str, **kw) -> Check:
    return Check(DEFAULT, (arg,), src, **kw)


def _dcl(args: str, src: str) -> Check:
    return Check(DEFAULT_OR_CL, tuple(args.split(",")), src)


def _dtype(arg: str, dtypes: tuple[str, ...], src: str) -> Check:
    return Check(DTYPE, (arg,), src, dtypes)


def _rank(arg: str, ranks: tuple[int, ...], src: str) -> Check:
    return Check(RANK, (arg,), src, ranks=ranks)


def _unary(op_file: str, line: int) -> tuple[Check, ...]:
    return (_same("self,out", f"{_P}{op_file}:{line}"),)


_SOFTMAX = lambda f: (  # noqa: E731 - softmax and log_softmax share check_log_softmax_args
    _dcl("self,out", _U + "activation_ops_util.cpp:88"),
    _same("self,out", f"{_P}{f}:40"),
    _dtype("self", FLOATHBF16, f"{_P}{f}:49"),
)

KERNEL_CHECKS: dict[str, tuple[Check, ...]] = {
    "aten._softmax.default": _SOFTMAX("op_softmax.cpp"),
    "aten._log_softmax.default": _SOFTMAX("op_log_softmax.cpp"),
    "aten.avg_pool2d.default": (
        _dcl("self,out", _U + "kernel_ops_util.cpp:323"),
        _rank("self", (3, 4), _U + "kernel_ops_util.cpp:326"),
        _same("self,out", _P + "op_avg_pool2d.cpp:47"),
        _default("self", _P + "op_avg_pool2d.cpp:50"),
        _dtype("self", FLOATHBF16 + ("int64",), _P + "op_avg_pool2d.cpp:74"),
    ),
    "aten._adaptive_avg_pool2d.default": (
        _dcl("self,out", _U + "kernel_ops_util.cpp:271"),
        _rank("self", (3, 4), _U + "kernel_ops_util.cpp:274"),
        _same("self,out", _P + "op__adaptive_avg_pool2d.cpp:49"),
        _default("self", _P + "op__adaptive_avg_pool2d.cpp:52"),
        _dtype("self", FLOATHBF16 + ("int64",), _P + "op__adaptive_avg_pool2d.cpp:76"),
    ),
    "aten.max_pool2d_with_indices.default": (
        _dcl("self,out", _U + "kernel_ops_util.cpp:541"),
        _rank("self", (3, 4), _U + "kernel_ops_util.cpp:544"),
        _dtype("self", REALHBF16, _P + "op_max_pool2d_with_indices.cpp:73"),
    ),
    "aten.upsample_nearest2d.vec": (
        _same("input,out", _U + "upsample_util.cpp:21"),
        _rank("input", (4,), _U + "upsample_util.cpp:22"),
        _dcl("input,out", _U + "upsample_util.cpp:24"),
        _dtype("input", REALHBF16, _P + "op_upsample_nearest2d.cpp:126"),
    ),
    "aten.upsample_bilinear2d.vec": (
        _same("input,out", _U + "upsample_util.cpp:21"),
        _rank("input", (4,), _U + "upsample_util.cpp:22"),
        _dcl("input,out", _U + "upsample_util.cpp:24"),
        _dtype("input", REALHBF16, _P + "op_upsample_bilinear2d.cpp:216"),
    ),
    # op_cat.cpp:54-55 takes outer/inner sizes from the logical shape and memcpys each input's buffer:
    # for channels-last tensors cat along any dim but 0 scrambles the values (measured on QEMU M55).
    "aten.cat.default": (_same("tensors,out", _U + "copy_ops_util.cpp:103"),
                         Check(IGNORES_DIM_ORDER, ("tensors", "out"), _P + "op_cat.cpp:54")),
    "aten.stack.default": (_same("tensors,out", _U + "stack_util.cpp:77"),
                           _default("out", _U + "stack_util.cpp:84")),
    "aten.gelu.default": (_same("self,out", _P + "op_gelu.cpp:37"),
                          _dtype("self", FLOATHBF16, _P + "op_gelu.cpp:40")),
    "aten.native_layer_norm.default": (
        _default("input", _P + "op_native_layer_norm.cpp:103"),
        _same("input,out", _P + "op_native_layer_norm.cpp:106"),
        _same("input,weight", _P + "op_native_layer_norm.cpp:113"),
        _same("input,bias", _P + "op_native_layer_norm.cpp:121"),
        _dtype("input", FLOATHBF16, _P + "op_native_layer_norm.cpp:151"),
    ),
    "aten.native_group_norm.default": (
        _default("input", _P + "op_native_group_norm.cpp:168"),
        _same("input,out", _P + "op_native_group_norm.cpp:171"),
        _dtype("input", FLOATHBF16, _P + "op_native_group_norm.cpp:195"),
    ),
    "aten._native_batch_norm_legit_no_training.default": (
        _default("input", _P + "op_native_batch_norm.cpp:73"),
        _same("input,out", _P + "op_native_batch_norm.cpp:79"),
        _dtype("input", FLOATHBF16, _P + "op_native_batch_norm.cpp:108"),
    ),
    "aten.mean.dim": (_same("self,out", _P + "op_mean.cpp:39"), _default("self", _P + "op_mean.cpp:42"),
                      _dtype("out", FLOATHBF16, _P + "op_mean.cpp:94")),
    "aten.sum.dim_IntList": (_same("self,out", _P + "op_sum.cpp:46"), _default("self", _P + "op_sum.cpp:49")),
    "aten.amax.default": (_same("self,out", _P + "op_amax.cpp:44"),),
    "aten.max.dim": (_same("self,out", _P + "op_max.cpp:62"), _default("self", _P + "op_max.cpp:74")),
    "aten.permute_copy.default": (_same("self,out", _P + "op_permute_copy.cpp:50"),),
    "aten.transpose_copy.int": (_same("self,out", _P + "op_transpose_copy.cpp:60"),),
    # Most view_copy nodes become planned views (no kernel call) in to_executorch; the rule sees only
    # those the program still calls.
    "aten.view_copy.default": (
        _same("self,out", _P + "op_view_copy.cpp:47"),
        _default("self", _P + "op_view_copy.cpp:50"),
    ),
    "aten.expand_copy.default": (_same("self,out", _P + "op_expand_copy.cpp:87"),
                                 _default("self", _P + "op_expand_copy.cpp:89")),
    "aten.squeeze_copy.dims": (_same("self,out", _P + "op_squeeze_copy.cpp:70"),
                               _default("self", _P + "op_squeeze_copy.cpp:73")),
    "aten.squeeze_copy.dim": (_same("self,out", _P + "op_squeeze_copy.cpp:32"),
                              _default("self", _P + "op_squeeze_copy.cpp:35")),
    "aten.slice_copy.Tensor": (_same("self,out", _P + "op_slice_copy.cpp:36"),),
    "aten.split_with_sizes_copy.default": (_same("self,out", _P + "op_split_with_sizes_copy.cpp:44"),),
    "aten.index.Tensor": (_same("self,out", _P + "op_index.cpp:201"), _default("self", _P + "op_index.cpp:204")),
    "aten.pixel_shuffle.default": (_same("self,out", _P + "op_pixel_shuffle.cpp:81"),
                                   _default("self", _P + "op_pixel_shuffle.cpp:84")),
    # op_constant_pad_nd.cpp:204-206 takes both tensors' strides from their logical sizes (getTrailingDims) and
    # copies rows by them: the check at :252 lets two channels-last tensors through, and a pad of any dim but 0
    # then writes scrambled values (measured on QEMU M55: braindecode's EEGInceptionERP, "same" padding).
    "aten.constant_pad_nd.default": (_same("self,out", _P + "op_constant_pad_nd.cpp:252"),
                                     Check(PAD_IGNORES_DIM_ORDER, ("self", "out"), _P + "op_constant_pad_nd.cpp:204")),
    "aten.convolution.default": (_dcl("input,out", _U + "kernel_ops_util.cpp:384"),
                                 _rank("input", (3, 4), _U + "kernel_ops_util.cpp:394"),
                                 _same("input,out", _P + "op_convolution.cpp:379")),
    "aten.addmm.default": (_same("self,mat1,mat2,out", _P + "op_addmm.cpp:48"),
                           _default("self", _P + "op_addmm.cpp:54")),
    "aten.mm.default": (_same("self,mat2,out", _P + "op_mm.cpp:35"), _default("self", _P + "op_mm.cpp:38")),
    "aten.bmm.default": (_same("self,mat2,out", _P + "op_bmm.cpp:25"), _default("self", _P + "op_bmm.cpp:28")),
    "aten.embedding.default": (_same("weight,indices,out", _P + "op_embedding.cpp:105"),
                               _default("weight", _P + "op_embedding.cpp:111")),
    "aten.full_like.default": (_same("self,out", _P + "op_full_like.cpp:38"),
                               _default("self", _P + "op_full_like.cpp:41")),
    "aten.add.Tensor": (_same("self,other,out", _P + "op_add.cpp:37"),),
    "aten.add.Scalar": (_same("self,out", _P + "op_add.cpp:116"),),
    "aten.sub.Tensor": (_same("self,other,out", _P + "op_sub.cpp:41"),),
    "aten.sub.Scalar": (_same("self,out", _P + "op_sub.cpp:99"),),
    "aten.mul.Tensor": (_same("self,other,out", _P + "op_mul.cpp:31"),),
    "aten.mul.Scalar": (_same("self,out", _P + "op_mul.cpp:100"),),
    "aten.div.Tensor": (_same("self,other,out", _P + "op_div.cpp:47"),),
    "aten.div.Tensor_mode": (_same("self,other,out", _P + "op_div.cpp:118"),),
    "aten.div.Scalar": (_same("self,out", _P + "op_div.cpp:192"),),
    "aten.minimum.default": (_same("self,other,out", _P + "op_minimum.cpp:31"),),
    "aten.maximum.default": (_same("self,other,out", _P + "op_maximum.cpp:31"),),
    "aten.where.self": (_same("condition,self,other,out", _P + "op_where.cpp:29"),),
    "aten.pow.Tensor_Tensor": (_same("self,exponent,out", _P + "op_pow.cpp:36"),),
    "aten.pow.Tensor_Scalar": (_same("self,out", _P + "op_pow.cpp:91"),),
    "aten.clamp.default": (_same("self,out", _P + "op_clamp.cpp:124"),),
    "aten.clamp.Tensor": (_same("self,min,max,out", _P + "op_clamp.cpp:196"),),
    "aten.hardtanh.default": _unary("op_hardtanh.cpp", 39),
    "aten.sigmoid.default": _unary("op_sigmoid.cpp", 26),
    "aten.relu.default": _unary("op_relu.cpp", 43),
    "aten.leaky_relu.default": (_same("self,out", _P + "op_leaky_relu.cpp:38"),
                                _dtype("self", FLOATHBF16, _P + "op_leaky_relu.cpp:46")),
    "aten.elu.default": (_same("self,out", _P + "op_elu.cpp:29"),
                         _dtype("self", FLOATHBF16, _P + "op_elu.cpp:37")),
    "aten.glu.default": (_same("self,out", _P + "op_glu.cpp:138"),),
    "aten.abs.default": _unary("op_abs.cpp", 37),
    "aten.neg.default": _unary("op_neg.cpp", 33),
    "aten.clone.default": _unary("op_clone.cpp", 41),
    # Unary math ops are DEFINE_UNARY_UFUNC_* (pattern/pattern.h) over one shared body.
    **{f"aten.{name}.default": (_same("self,out", _P + "pattern/unary_ufunc_realhbbf16_to_floathbf16.cpp:34"),)
       for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "erf", "exp", "expm1",
                    "log", "log10", "log1p", "log2", "reciprocal", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh")},
    **{f"aten.{name}.default": (_same("self,out", _P + "pattern/unary_ufunc_realhbf16.cpp:35"),)
       for name in ("ceil", "floor", "trunc")},
}


def checks_for(target: str) -> tuple[Check, ...] | None:
    """The checks of the portable kernel for `target`, or None when the table has none."""
    return KERNEL_CHECKS.get(target)
