"""The host reference of a lowered program's float portable ops, computed by ExecuTorch's own portable
kernels (the ones the target runs), not by PyTorch's.

Why: the lowered program's expected outputs come from running its graph in PyTorch, so every op left on
portable kernels is computed there by ATen's kernel (vectorised, Welford statistics, blocked
convolutions) while the target runs ExecuTorch's portable C kernel (plain loops). Both are right, and
they round differently: measured on a 1x64x8x8 group norm, 2,167 of 4,096 values differ (|d| <= 1.4e-6).
A value near a quantisation boundary after such an op then lands one step apart, and a correct target
FAILs (FPN from segmentation-models-pytorch, `--keep-going` on QEMU M55: 1 of 12,288 output values).

How: each such op is lowered alone to a one-op ExecuTorch program (its tensors as inputs, so one program
serves every node of the same signature) and run through ExecuTorch's pybindings on its host inputs,
~0.2 s per distinct signature. Ops that are one IEEE operation per element, or move data, round the same
in both and are left to PyTorch (ROUNDING_EXACT). The target's portable kernels are compiled without
fused multiply-add (kernels/runner/CMakeLists.txt, -ffp-contract=off) so they round as the x86-64 wheel's do.
Qt-free; torch and executorch only inside the functions."""
from __future__ import annotations

from typing import Any

# One IEEE operation per element (or no arithmetic): ATen and the portable kernel give the same bits.
ROUNDING_EXACT = frozenset({
    "add", "sub", "mul", "div", "neg", "abs", "relu", "clamp", "hardtanh", "maximum", "minimum", "where",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "bitwise_not",
    "view_copy", "view", "reshape", "permute_copy", "permute", "expand_copy", "expand", "squeeze_copy",
    "unsqueeze_copy", "slice_copy", "select_copy", "cat", "clone", "_clone_dim_order", "_to_dim_order_copy",
    "_to_copy", "constant_pad_nd", "max_pool2d", "max_pool2d_with_indices", "upsample_nearest2d", "full",
    "full_like", "zeros", "ones", "alias_copy", "split_with_sizes_copy", "split_copy", "index", "gather",
    "transpose_copy", "t_copy", "amax", "amin", "max", "min", "argmax", "argmin", "repeat", "flip", "roll",
    "pixel_shuffle", "pixel_unshuffle", "floor", "ceil", "round", "trunc", "sign", "fill", "scalar_tensor",
    "arange", "empty", "index_select", "masked_fill", "_unsafe_view", "unbind_copy", "stack",
})
MAX_PROGRAMS = 512      # one-op programs kept per process (a few KB each)
_FLOAT = ("torch.float32", "torch.float64", "torch.float16", "torch.bfloat16")


def op_name(target: Any) -> str:
    """"aten.native_group_norm.default" (an edge op's str() carries its whole schema)."""
    return str(getattr(target, "__name__", target))


def _base(target: Any) -> str:
    name = op_name(target)
    parts = name.split(".")
    return parts[-2] if len(parts) >= 2 else name


def needs_portable(node: Any) -> bool:
    """A float op the target runs on a portable kernel whose rounding PyTorch's kernel may not share."""
    if node.op != "call_function":
        return False
    if not op_name(node.target).startswith(("aten.", "aten::")) or _base(node.target) in ROUNDING_EXACT:
        return False
    val = node.meta.get("val")
    vals = val if isinstance(val, (list, tuple)) else [val]
    return any(str(getattr(v, "dtype", "")) in _FLOAT for v in vals)


class _LoadedProgram:
    def __init__(self, buffer: bytes, module: Any) -> None:
        self.buffer, self.module = buffer, module


class PortableKernels:
    """One-op ExecuTorch programs, built on first use per signature and run through the pybindings."""

    def __init__(self) -> None:
        self._programs: dict[tuple, Any] = {}
        self.unavailable: dict[str, str] = {}      # op -> why it stayed on PyTorch's kernel

    def run(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """The op on ExecuTorch's portable kernel, or None when it cannot be lowered alone."""
        import torch
        from torch.utils._pytree import tree_flatten

        leaves, spec = tree_flatten((args, kwargs))
        slots = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
        tensors = tuple(leaves[i].detach().contiguous() for i in slots)     # a Parameter is no program input
        fixed = tuple(repr(x) for i, x in enumerate(leaves) if i not in slots)
        key = (str(target), str(spec), tuple((tuple(t.shape), t.dtype) for t in tensors), fixed)
        program = self._programs.get(key)
        if program is None and key not in self._programs:
            program = self._programs[key] = self._build(target, leaves, spec, slots, tensors)
        if program is None:
            return None
        out = [o.clone() for o in program.module.forward(tensors)]   # outputs may alias the program's memory
        return out[0] if len(out) == 1 else tuple(out)

    def _build(self, target: Any, leaves: list, spec: Any, slots: list[int], tensors: tuple) -> Any:
        import torch
        from executorch.exir import EdgeCompileConfig, to_edge
        from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
        from torch.utils._pytree import tree_unflatten

        # an edge op's ATen overload (an ATen OpOverload's own `_op` is its C function)
        op = target if isinstance(target, torch._ops.OpOverload) else getattr(target, "_op", target)

        class OneOp(torch.nn.Module):
            def forward(self, *ts: Any) -> Any:
                filled = list(leaves)
                for slot, t in zip(slots, ts):
                    filled[slot] = t
                a, kw = tree_unflatten(filled, spec)
                return op(*a, **kw)

        try:
            ep = torch.export.export(OneOp(), tensors, strict=False)
            edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False, preserve_ops=[op]))
            calls = [n for n in edge.exported_program().graph.nodes if n.op == "call_function"
                     and _base(n.target) != "getitem"]
            if len(calls) != 1 or _base(calls[0].target) != _base(target):
                self.unavailable[op_name(target)] = f"lowered alone it became {[op_name(c.target) for c in calls]}"
                return None
            buffer = edge.to_executorch().buffer
            # the loaded program reads the buffer in place (no copy): freeing it crashed the next run
            program = _LoadedProgram(buffer, _load_for_executorch_from_buffer(buffer))
        except Exception as exc:  # noqa: BLE001  the PyTorch kernel stands in; the note says which op
            self.unavailable[op_name(target)] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            return None
        return program


_SHARED: PortableKernels | None = None


def shared_portable_kernels() -> PortableKernels:
    """One set of one-op programs per process: `evaluate --on-target` bundles every sample of one program,
    and each would otherwise build the same programs again (~0.2 s per signature)."""
    global _SHARED
    if _SHARED is None or len(_SHARED._programs) > MAX_PROGRAMS:
        _SHARED = PortableKernels()
    return _SHARED
