"""Known fixes, by the op the user wrote (its quantization-time name) and by category. Kept apart
from the detection logic so they are easy to extend as ExecuTorch's Cortex-M backend grows.
Fixes the tool can try on its own are listed in backend_core.lowering.lower.verify."""
from __future__ import annotations

_LAYERNORM = ("There is no CMSIS-NN LayerNorm: keep it in float if it is rare, or use a normalisation "
              "that folds into the preceding layer (BatchNorm after a conv).")
_SOFTMAX = ("CMSIS-NN softmax works on the last dimension only: permute so the softmax dim is last "
            "(x.transpose(dim, -1).softmax(-1).transpose(dim, -1)).")
_MAXPOOL = ("Use ceil_mode=False (pad the input to keep the output size) and no dilation, so max_pool2d "
            "maps to arm_max_pool_s8.")
_MAXPOOL_1D = ("There is no 1-D max pool on Cortex-M: the quantizer's pattern and CMSIS-NN's arm_max_pool_s8 take "
               "a 4-D [N, C, H, W] max_pool2d, and a max_pool1d on [N, C, L] stays in float. Write it as "
               "nn.MaxPool2d((1, k)) on x.unsqueeze(2) (channels-last) and squeeze(2) after it.")

_RNN = ("{} has no Cortex-M support yet (pytorch/executorch#21024 is an open PR): lower with `--rewrite rnn-cells` "
        "(the module as its cell equations over nn.Linear, one per gate: quantized_linear, the LUT sigmoid/tanh of "
        "quantized_activation, quantized_mul/add), or keep it in float (its decomposition runs on portable kernels; "
        "`--keep-going` writes its float linears as addmm so the program runs).")

OP_SUGGESTIONS: dict[str, str] = {
    "native_layer_norm": _LAYERNORM,
    "layer_norm": _LAYERNORM,
    "_softmax": _SOFTMAX,
    "softmax": _SOFTMAX,
    "max_pool2d_with_indices": _MAXPOOL,
    "max_pool2d": _MAXPOOL,
    "max_pool1d": _MAXPOOL_1D,
    "max_pool1d_with_indices": _MAXPOOL_1D,
    "exp": "exp has no int8 kernel: fold it into a supported activation (sigmoid/tanh use a LUT) "
           "or keep it in float.",
    "avg_pool2d": "Remove divisor_override / count_include_pad=False variants so avg_pool2d maps "
                  "to arm_avgpool_s8.",
    "conv2d": "Legacy flow needs channels-last (NHWC) inputs for convs: pass channels_last "
              "tensors or try --flow explicit.",
    "convolution": "Legacy flow needs channels-last (NHWC) inputs for convs: pass channels_last "
                   "tensors or try --flow explicit.",
    "conv1d": "The legacy flow has no conv1d pattern: try --flow explicit (it quantizes conv1d), or write it "
              "as a Conv2d with a 1xK kernel on a channels_last [N, C, 1, L] tensor.",
    "add": "CMSIS-NN add needs equal shapes or a per-channel broadcast on channels_last tensors; "
           "expand the operand first.",
    "mul": "CMSIS-NN mul needs equal shapes or a per-channel broadcast on channels_last tensors; "
           "expand the operand first.",
    "mean": "Reduce over the spatial dims (H, W) with keepdim so it becomes an average pool.",
    "relu6": "Write the activation as nn.Hardtanh(0.0, 6.0) / F.hardtanh(x, 0.0, 6.0): conv2d, linear "
             "and add followed by hardtanh are quantizer patterns, and the clamp fuses into the kernel's "
             "activation range; relu6 has no pattern.",
    "matmul": "Make the batch dims equal before the matmul (expand the smaller operand, e.g. "
              "a.expand(B, M, K)), so MatmulToBmmPass turns it into a bmm the quantizer has a pattern for.",
    "lstm": _RNN.format("nn.LSTM"),
    "gru": _RNN.format("nn.GRU"),
    "conv_transpose2d": "CMSIS-NN transposed conv takes output_padding=0, groups=1 and dilation=1 on "
                        "channels_last tensors: change the layer's configuration.",
}

CATEGORY_SUGGESTIONS: dict[str, str] = {
    "not_annotated": "The quantizer has no Cortex-M pattern for this op: replace it with a supported "
                     "op or accept a float island (a dequantize/quantize pair around it).",
    "rejected_by_quantizer": "Change the op's configuration to one the checker accepts (see the limit hit).",
    "no_cortex_m_rewrite": "No Cortex-M kernel exists for this op/configuration on this target; "
                           "change the configuration or accept a portable int8 kernel.",
    "activation_not_fused": "Place the activation directly after a conv, linear or add so it can be "
                            "fused into the kernel's clamp range.",
    "unsupported_dtype": "Use the default int8 quantization config for this op (int16 is supported "
                         "only by a few kernels).",
    "layout": "Use NHWC-eligible shapes (4-D channels-last tensors) or the legacy flow.",
    "unsupported_module": "Keep the module in float, or replace it with layers the backend supports.",
    "integer_arithmetic": "Usually nothing to fix: integer index arithmetic is cheap. If the shapes are "
                          "static, precompute the result once (a constant buffer) instead of in forward().",
    "data_dependent_scalar": "Compute the value at export instead: anchors and strides (or any value read "
                             "with .item()) depend only on the fixed input size, so make them constants "
                             "(Python ints, or a buffer computed once in __init__ for the export size) and "
                             "export folds them.",
    "unknown": "Inspect the evidence; please report the model so the reason can be classified.",
}

_FUSING_PRODUCERS = ("conv", "linear", "add", "sub", "convolution", "addmm")


def maxpool2d_fix(args: tuple[str, ...]) -> str:
    """The max_pool2d fix for what this call actually uses (args as the snapshot records them: input, kernel,
    stride, padding, dilation, ceil_mode): "" when it uses neither ceil_mode nor a dilation."""
    dilation = args[4] if len(args) > 4 else "1"
    ceil = len(args) > 5 and args[5] == "True"
    need = ([] if dilation.replace(" ", "") in ("1", "[1,1]", "(1,1)") else [f"no dilation (it has {dilation})"]) \
        + (["ceil_mode=False (pad the input to keep the output size)"] if ceil else [])
    return f"Use {' and '.join(need)}, so max_pool2d maps to arm_max_pool_s8." if need else ""


def suggestion_for(op_base: str, category: str, final_base: str = "", args: tuple[str, ...] | None = None) -> str:
    """The fix for the user's op `op_base` (its quantization-time name) in this category; `args` (the user op's
    arguments as text) make a fix depend on what the call uses (max_pool2d's ceil_mode and dilation)."""
    if category in ("not_annotated", "rejected_by_quantizer", "no_cortex_m_rewrite", "layout",
                    "unsupported_module"):
        if op_base in ("max_pool2d", "max_pool2d_with_indices") and args is not None:
            return maxpool2d_fix(args) or CATEGORY_SUGGESTIONS.get(category, "")
        for base in (op_base, final_base):
            if base in OP_SUGGESTIONS:
                return OP_SUGGESTIONS[base]
    return CATEGORY_SUGGESTIONS.get(category, "")


def suggestion_for_activation(producer_target: str | None) -> str:
    """ActivationFusionPass's advice only when the activation does not already follow a kernel
    it could fuse into; otherwise the producer itself is what to fix."""
    base = producer_target.split(".")[-2] if producer_target and producer_target.count(".") >= 2 else (
        producer_target or "")
    if any(base.startswith(p) for p in _FUSING_PRODUCERS):
        return (f"The activation already follows {producer_target}; it could not fuse because that op did "
                "not become a quantized Cortex-M kernel with it (see that op's own fallback, or an output "
                "used elsewhere). Fix the producer's fallback and the activation fuses.")
    return CATEGORY_SUGGESTIONS["activation_not_fused"]
