"""Known fixes, by op and by category. Kept apart from the detection logic so they are easy
to extend as ExecuTorch's Cortex-M backend grows."""
from __future__ import annotations

OP_SUGGESTIONS: dict[str, str] = {
    "native_layer_norm": "There is no CMSIS-NN LayerNorm: keep it in float if it is rare, or use a "
                         "normalisation that folds into the preceding layer (BatchNorm after a conv).",
    "layer_norm": "There is no CMSIS-NN LayerNorm: keep it in float if it is rare, or use a "
                  "normalisation that folds into the preceding layer (BatchNorm after a conv).",
    "_softmax": "CMSIS-NN softmax works on the last dimension only: permute so the softmax dim is last.",
    "softmax": "CMSIS-NN softmax works on the last dimension only: permute so the softmax dim is last.",
    "max_pool2d_with_indices": "Use ceil_mode=False (pad the input to keep the output size) and no "
                               "dilation, so max_pool2d maps to arm_max_pool_s8.",
    "max_pool2d": "Use ceil_mode=False (pad the input to keep the output size) and no dilation, "
                  "so max_pool2d maps to arm_max_pool_s8.",
    "exp": "exp has no int8 kernel: fold it into a supported activation (sigmoid/tanh use a LUT) "
           "or keep it in float.",
    "avg_pool2d": "Remove divisor_override / count_include_pad=False variants so avg_pool2d maps "
                  "to arm_avgpool_s8.",
    "convolution": "Legacy flow needs channels-last (NHWC) inputs for convs: pass channels_last "
                   "tensors or try --flow explicit.",
    "clamp": "Place the activation directly after a conv, linear or add so ActivationFusionPass can "
             "fold it into the kernel's activation_min/max.",
    "add": "CMSIS-NN add needs equal shapes or a per-channel broadcast; expand the operand first.",
    "mean": "Reduce over the spatial dims (H, W) with keepdim so it becomes an average pool.",
}

CATEGORY_SUGGESTIONS: dict[str, str] = {
    "not_annotated": "The quantizer has no Cortex-M pattern for this op: replace it with a supported "
                     "op or accept a float island (a dequantize/quantize pair around it).",
    "rejected_by_quantizer": "Change the op's configuration to one the checker accepts.",
    "no_cortex_m_rewrite": "No Cortex-M kernel exists for this op/configuration on this target; "
                           "change the configuration or accept a portable int8 kernel.",
    "activation_not_fused": "Place the activation directly after a conv, linear or add so it can be "
                            "fused into the kernel's clamp range.",
    "unsupported_dtype": "Use the default int8 quantization config for this op (int16 is supported "
                         "only by a few kernels).",
    "layout": "Use NHWC-eligible shapes (4-D channels-last tensors) or the legacy flow.",
    "unknown": "Inspect the evidence; please report the model so the reason can be classified.",
}


def suggestion_for(op_base: str, category: str) -> str:
    if category in ("not_annotated", "rejected_by_quantizer", "no_cortex_m_rewrite", "activation_not_fused",
                    "layout") and op_base in OP_SUGGESTIONS:
        if category == "activation_not_fused":
            return CATEGORY_SUGGESTIONS[category]
        return OP_SUGGESTIONS[op_base]
    return CATEGORY_SUGGESTIONS.get(category, "")
