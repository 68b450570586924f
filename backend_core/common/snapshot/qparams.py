"""Read quantization parameters from an FX node in whatever form the stage holds them:
q/dq arguments (after convert_pt2e / at edge), `input_qparams`/`output_qparams` meta (after
FoldAndAnnotateQParamsPass), or cortex_m kernel arguments (after AtenToCortexMPass)."""
from __future__ import annotations

import math
from typing import Any, Callable

from backend_core.common.snapshot.classify import is_quant_boundary, op_base_name
from backend_core.common.snapshot.model import QParam, Requant

TensorReader = Callable[[Any], Any]   # FX node -> torch.Tensor | None (for get_attr / params)


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _float_list(v: Any) -> list[float]:
    try:
        import torch

        if isinstance(v, torch.Tensor):
            return [float(x) for x in v.detach().flatten().tolist()]
    except ImportError:  # pragma: no cover - torch is always there in workers
        pass
    if isinstance(v, (list, tuple)):
        return [float(x) for x in v]
    return [float(v)]


def _resolve(v: Any, read_tensor: TensorReader) -> Any:
    if hasattr(v, "op") and hasattr(v, "target"):   # an FX node
        return read_tensor(v)
    return v


def qparam_from_quant_node(node: Any, read_tensor: TensorReader) -> QParam | None:
    """QParam from the arguments of a quantize/dequantize node, or None for other nodes."""
    target = getattr(node.target, "__name__", str(node.target))
    if not is_quant_boundary(target):
        return None
    base = op_base_name(target)
    args = list(node.args)
    try:
        if "per_channel" in base:
            # (input, scales, zero_points, axis, quant_min, quant_max, dtype)
            scales = _float_list(_resolve(args[1], read_tensor)) if args[1] is not None else []
            zps = _resolve(args[2], read_tensor)
            zp0 = int(_float_list(zps)[0]) if zps is not None else 0
            return QParam(dtype=dtype_name(args[6]), scale=sum(scales) / max(len(scales), 1),
                          zero_point=zp0, qmin=int(args[4]), qmax=int(args[5]), per_channel=True,
                          axis=int(args[3]), scales=tuple(scales), source="q/dq args")
        if "per_tensor" in base:
            scale = _float_list(_resolve(args[1], read_tensor))[0]
            zp = int(_float_list(_resolve(args[2], read_tensor))[0])
            return QParam(dtype=dtype_name(args[5]), scale=scale, zero_point=zp,
                          qmin=int(args[3]), qmax=int(args[4]), source="q/dq args")
    except (IndexError, TypeError, ValueError):
        return None
    return None


def qparam_from_quant_args(qa: Any) -> QParam | None:
    """QParam from executorch.backends.arm's QuantArgs (node.meta["input_qparams"][i])."""
    if qa is None:
        return None
    try:
        scales = _float_list(qa.scale)
        per_channel = bool(getattr(qa, "per_channel", False))
        zp = _float_list(qa.zp)[0] if qa.zp is not None else 0
        return QParam(dtype=dtype_name(qa.dtype), scale=sum(scales) / max(len(scales), 1),
                      zero_point=int(zp), qmin=int(qa.qmin), qmax=int(qa.qmax),
                      per_channel=per_channel, axis=getattr(qa, "axis", None) if per_channel else None,
                      scales=tuple(scales) if per_channel else (), source="meta")
    except (TypeError, ValueError, AttributeError):
        return None


def requant_from_cortex_m_args(node: Any, read_tensor: TensorReader | None = None) -> Requant | None:
    """Decode a cortex_m op's multipliers/shifts (scale = m / 2^31 * 2^shift) and offsets."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return None
    values: dict[str, Any] = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            values[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            values[arg.name] = node.kwargs[arg.name]
    mult_key = next((k for k in values if "multiplier" in k), None)
    shift_key = next((k for k in values if "shift" in k and "multiplier" not in k), None)
    if mult_key is None and "input_offset" not in values and "output_offset" not in values:
        return None
    def tensor_ints(v: Any) -> tuple[int, ...]:
        if read_tensor is not None and hasattr(v, "op"):
            t = read_tensor(v)
            return tuple(int(x) for x in t.flatten().tolist()) if t is not None else ()
        return _int_tuple(v)

    mults = tensor_ints(values.get(mult_key)) if mult_key else ()
    shifts = tensor_ints(values.get(shift_key)) if shift_key else ()
    eff = tuple(m / float(1 << 31) * math.ldexp(1.0, s) for m, s in zip(mults, shifts))
    return Requant(multipliers=mults, shifts=shifts, effective_scales=eff,
                   input_offset=_opt_int(values.get("input_offset")),
                   output_offset=_opt_int(values.get("output_offset")),
                   activation_min=_opt_int(values.get("activation_min")),
                   activation_max=_opt_int(values.get("activation_max")))


def _int_tuple(v: Any) -> tuple[int, ...]:
    if v is None:
        return ()
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            try:
                out.append(int(x))
            except (TypeError, ValueError):
                return ()
        return tuple(out)
    try:
        return (int(v),)
    except (TypeError, ValueError):
        return ()


def _opt_int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and not hasattr(v, "op") else None
    except (TypeError, ValueError):
        return None
