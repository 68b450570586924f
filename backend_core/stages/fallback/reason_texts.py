"""The phrases fallback reasons are made of: how a message names the op the user wrote, where it runs
in float, and the whole messages of the causes that are not a quantizer or pass rule (an RNN module, an
op --keep-going took out of quantisation, a weight computed from parameters in forward)."""
from __future__ import annotations

from typing import Any

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import NodeSnapshot
from backend_core.stages.fallback.evidence import Facts
from backend_core.stages.fallback.reason_costs import element_count, island_cost


def at_q(f: Facts) -> str:
    """How a message names the op the user wrote: `relu6` (aten.relu6.default at quantization time)."""
    q = f.quantized
    if q is None:
        return f"{f.node.target} (no quantization-time op traced)"
    return f"`{q.name}` ({q.target} at quantization time)"


def later_text(f: Facts) -> str:
    """', which to_edge turned into hardtanh' when the final op differs from the user's."""
    q = f.quantized
    if q is None or op_base_name(q.target) == op_base_name(f.node.target):
        return ""
    return f"; to_edge and the passes turned it into {op_base_name(f.node.target)} later"


def float_where(f: Facts) -> str:
    if f.fed_by_dq and f.feeds_q:
        return "in float between a dequantize and a quantize"
    if f.fed_by_dq:
        return "in float after a dequantize"
    if f.feeds_q:
        return "in float before a quantize"
    return "in float"


def rnn_module_text(f: Facts, q: NodeSnapshot) -> str:
    return (f"nn.{q.module_type} `{q.module_path}` is not supported by the Cortex-M backend (no quantizer "
            f"pattern, no kernel): the quantizer saw {at_q(f)} and left it in float; to_edge decomposes "
            f"the module into linear/sigmoid/tanh/mul/add nodes, which all run in float on portable kernels. "
            f"ExecuTorch's own LSTM support for Cortex-M is still an open pull request (pytorch/executorch#21024); "
            f"`--rewrite rnn-cells` writes the module as its cell equations over nn.Linear so the gates quantize.")


def pass_failure_text(f: Facts, why: dict[str, Any], node: NodeSnapshot) -> str:
    """--keep-going left this op in float because a pass failed on it: say so, with ExecuTorch's words."""
    via = f" (as {why['via']})" if why.get("via") else ""
    if why.get("stage") == "pre-flight":       # it lowered, but the target would abort on it
        return (f"--keep-going took {at_q(f)} out of quantisation{via}: plain ExecuTorch lowers it, but "
                f"{why.get('error')}, so the target would abort (check: {why.get('check')}). It runs "
                f"{float_where(f)} on a portable kernel; this lowering is the tool's workaround, not what "
                f"ExecuTorch produces." + island_cost(node))
    return (f"--keep-going took {at_q(f)} out of quantisation{via} because ExecuTorch's {why.get('stage')} failed "
            f"on it: \"{why.get('error')}\"" + (f" (check: {why['check']})" if why.get("check") else "")
            + f". It runs {float_where(f)} on a portable kernel. Plain ExecuTorch does not lower this model "
            f"at all; this lowering is the tool's workaround, not what ExecuTorch produces." + island_cost(node))


def parameter_computation_text(f: Facts, q: NodeSnapshot, node: NodeSnapshot) -> tuple[str, str]:
    """An op whose inputs are all parameters (weight norm's pow/sum/div, a max-norm's renorm): export keeps the
    arithmetic, so the target recomputes the same weight on every inference."""
    where = f" at {q.source.short} (`{q.source.code}`)" if q.source else ""
    module = f" in {q.module_path} ({q.module_type})" if q.module_path else ""
    numel = element_count(node.shape)
    msg = (f"{at_q(f)}{where}{module} reads only parameters: a weight computed in forward (weight norm, a "
           f"parametrization or a max-norm constraint). In eval mode it is the same tensor on every inference, "
           f"but torch.export keeps the arithmetic, so the target recomputes it each time {float_where(f)} on "
           f"a portable fp32 kernel ({numel:,} values) instead of storing the result as a weight.")
    fix = ("Compute the weight once before export: torch.nn.utils.parametrize.remove_parametrizations(module, "
           "'weight', leave_parametrized=True) (torch.nn.utils.remove_weight_norm for the old weight_norm). The "
           "tool can fold it for you: --verify-suggestions re-lowers a copy with every parameter-only computation "
           "folded into a constant (checked equal on the example inputs) and shows the fallbacks it removes.")
    return msg, fix
