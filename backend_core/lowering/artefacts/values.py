"""Decode a program's values (ExecuTorch EValues) into what the snapshot shows: dtype names,
shapes, dim orders, byte sizes, constants' data, and short argument text."""
from __future__ import annotations

import struct
from typing import Any

# executorch.exir.scalar_type.ScalarType codes -> (snapshot dtype name, struct format, bytes)
SCALAR_TYPES: dict[int, tuple[str, str, int]] = {
    0: ("uint8", "B", 1), 1: ("int8", "b", 1), 2: ("int16", "h", 2), 3: ("int32", "i", 4),
    4: ("int64", "q", 8), 5: ("float16", "e", 2), 6: ("float32", "f", 4), 7: ("float64", "d", 8),
    11: ("bool", "?", 1), 12: ("qint8", "b", 1), 13: ("quint8", "B", 1), 14: ("qint32", "i", 4),
    15: ("bfloat16", "", 2),
}
MAX_DECODED = 4096          # constants larger than this are sized, not decoded


def scalar_code(st: Any) -> int:
    return int(getattr(st, "value", st))


def dtype_of(tensor: Any) -> str:
    return SCALAR_TYPES.get(scalar_code(tensor.scalar_type), (str(tensor.scalar_type), "", 1))[0]


def numel(tensor: Any) -> int:
    n = 1
    for s in tensor.sizes:
        n *= int(s)
    return n


def nbytes(tensor: Any) -> int:
    return numel(tensor) * SCALAR_TYPES.get(scalar_code(tensor.scalar_type), ("", "", 1))[2]


def kind_of(value: Any) -> str:
    return type(value.val).__name__       # Tensor, Int, Double, IntList, TensorList, Null, ...


def is_constant(tensor: Any) -> bool:
    """Constants live in the program's constant buffer (index 0 is reserved for 'none')."""
    return int(getattr(tensor, "data_buffer_idx", 0) or 0) > 0 and tensor.allocation_info is None


def planned(tensor: Any) -> tuple[int, int] | None:
    """(memory id, offset) of a memory-planned tensor."""
    info = tensor.allocation_info
    if info is None:
        return None
    offset = int(info.memory_offset_low) + (int(getattr(info, "memory_offset_high", 0) or 0) << 32)
    return int(info.memory_id), offset


def constant_data(program: Any, tensor: Any, limit: int = MAX_DECODED) -> list[float] | list[int] | None:
    """The constant's elements (small constants only: scales, multipliers, shifts)."""
    code = scalar_code(tensor.scalar_type)
    name, fmt, size = SCALAR_TYPES.get(code, ("", "", 0))
    n = numel(tensor)
    if not fmt or n > limit:
        return None
    try:
        storage = program.constant_buffer[int(tensor.data_buffer_idx)].storage
    except (IndexError, AttributeError):
        return None
    if len(storage) < n * size:
        return None
    return list(struct.unpack_from(f"<{n}{fmt}", bytes(storage[: n * size])))


def python_value(program: Any, values: list[Any], index: int, depth: int = 0) -> Any:
    """The Python value of a scalar/list argument; tensors resolve to their data when constant
    and small (per-channel multipliers), else to None."""
    v = values[index].val
    k = type(v).__name__
    if k == "Int":
        return int(v.int_val)
    if k == "Double":
        return float(v.double_val)
    if k == "Bool":
        return bool(v.bool_val)
    if k == "String":
        return str(v.string_val)
    if k == "Null":
        return None
    if k == "IntList":
        return [python_value(program, values, int(i), depth + 1) for i in v.items] if depth < 2 else None
    if k == "DoubleList":
        return [float(x) for x in v.items]
    if k == "BoolList":
        return [bool(x) for x in v.items]
    if k == "Tensor" and is_constant(v):
        return constant_data(program, v)
    return None


def short_text(program: Any, values: list[Any], index: int, producer: dict[int, str]) -> str:
    """One argument as the inspector shows it: `%node`, `0.0131`, `[1, 1]`, `int8[32,16] const 512 B`."""
    v = values[index].val
    k = type(v).__name__
    if k == "Tensor":
        shape = "[" + ",".join(str(int(s)) for s in v.sizes) + "]"
        if index in producer:
            return f"%{producer[index]}"
        if is_constant(v):
            data = constant_data(program, v, 16)
            shown = f" = {_fmt_list(data)}" if data is not None else ""
            return f"{dtype_of(v)}{shape} constant {nbytes(v):,} B{shown}"
        return f"{dtype_of(v)}{shape}"
    if k == "TensorList":
        return "[" + ", ".join(short_text(program, values, int(i), producer) for i in v.items) + "]"
    if k == "OptionalTensorList":
        return "[" + ", ".join("None" if int(i) < 0 else short_text(program, values, int(i), producer)
                               for i in v.items) + "]"
    pv = python_value(program, values, index)
    if isinstance(pv, float):
        return f"{pv:.6g}"
    if isinstance(pv, list):
        return _fmt_list(pv)
    return repr(pv)


def _fmt_list(xs: list[Any], limit: int = 16) -> str:
    shown = ", ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in xs[:limit])
    return f"[{shown}{', …' if len(xs) > limit else ''}]"
