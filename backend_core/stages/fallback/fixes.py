"""The fixes the tool can try on its own for a fallback (a layout conversion, a rewrite of the user's
op), named so the GUI can offer one without importing the lowering: backend_core.lowering.lower.verify
re-lowers a modified copy to check it."""
from __future__ import annotations

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import FallbackReason

CHANNELS_LAST = "channels_last"
RNN_CELLS = "rnn-cells"          # backend_core.stages.fallback.rnn_cells (the --rewrite option)
VERIFIED = "verified"
NOT_VERIFIED = "not verified"


def fix_for(fb: FallbackReason, flow: str, channels_last: bool) -> str | None:
    """The automatic fix for this fallback, or None when there is none to try."""
    base = op_base_name(fb.user_op.target) if fb.user_op else ""
    if fb.category == "parameter_computation":
        from backend_core.stages.fallback.parameter_folding import FOLD_PARAMS

        return FOLD_PARAMS
    if fb.category == "layout" and flow == "legacy" and not channels_last:
        return CHANNELS_LAST
    if fb.category == "unsupported_module" and fb.user_op and fb.user_op.module_type in ("LSTM", "GRU"):
        return RNN_CELLS
    if base in ("relu6", "relu6_"):
        return "relu6_to_hardtanh"
    if base in ("softmax", "_softmax") and "softmax over dim" in fb.message:
        return "softmax_dim_last"
    return None


def describe(fix: str) -> str:
    from backend_core.stages.fallback.rewrites import REWRITES

    if fix == CHANNELS_LAST:
        return "model and 4-D inputs converted to channels_last (--channels-last)"
    if fix == RNN_CELLS:
        from backend_core.stages.fallback.rnn_cells import DESCRIPTION

        return DESCRIPTION
    return REWRITES[fix][1]
