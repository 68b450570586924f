"""Rules on the portable kernels the program calls: each kernel call's tensors (dtype, sizes, dim order,
exactly as the serialised program stores them, program_view.py) against what that kernel checks at run
time (kernels.py). Calls `to_executorch` inserted (a contiguous copy before a portable mean) are
checked too, and a node whose input the runtime receives through such a copy is judged on the copy."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend_core.common.finding import MAY_FAIL, WILL_FAIL, Finding
from backend_core.analyses.preflight.dim_order import describe, is_channels_last, is_contiguous, same_dim_order
from backend_core.analyses.preflight.kernels import (DEFAULT, DEFAULT_OR_CL, DTYPE, IGNORES_DIM_ORDER, PAD_IGNORES_DIM_ORDER,
                      RANK, SAME, Check, checks_for)
from backend_core.analyses.preflight.program_view import Call, ProgramView, schema_arg_names  # noqa: F401 - re-exported

# What the target does when a kernel check fails (kernel sets InvalidArgument; Method::execute
# returns it; the Arm runner reports it and stops).
ON_TARGET = ("On the target the kernel returns InvalidArgument and the method fails "
             "(\"Execution of method forward failed with status 0x12\").")
PORTABLE_NAMESPACES = ("aten::",)


@dataclass(frozen=True)
class TensorArg:
    name: str                 # schema argument name, or "out"
    node: str                 # the final-graph node that produced it ("value N" when none did)
    dtype: str | None
    shape: tuple[int, ...]
    dim_order: tuple[int, ...]


def arg_name(call: Call, i: int) -> str:
    """The schema name of argument i: the functional schema's names, then `out` for the (first) out."""
    if i < len(call.names):
        return call.names[i]
    a = call.args[i]
    if call.outs and a == call.outs[0]:
        return "out"
    if a in call.outs:
        return f"out{call.outs.index(a)}"
    return "out" if i == len(call.names) else f"arg{i}"    # a Tensor[] out (split_with_sizes_copy)


def call_tensor_args(view: ProgramView, call: Call) -> dict[str, list[TensorArg]]:
    """The call's tensor arguments by schema name (a Tensor[] gives several), `out` last."""
    out: dict[str, list[TensorArg]] = {}
    for i, a in enumerate(call.args):
        for t in view.tensors_of(a):
            src = call.where if a in call.outs and not call.inserted else view.label(t.index)
            out.setdefault(arg_name(call, i), []).append(TensorArg(arg_name(call, i), src, t.dtype, t.sizes,
                                                                   t.dim_order))
    return out


def call_arg(view: ProgramView, call: Call, name: str) -> Any:
    """A non-tensor argument by schema name (int, list, bool, None)."""
    for i, a in enumerate(call.args):
        if arg_name(call, i) == name:
            return view.value(a)
    return None


def call_ints(view: ProgramView, call: Call, name: str) -> list[int] | None:
    """An int[] argument by schema name, as values (not the EValue indices the program stores)."""
    for i, a in enumerate(call.args):
        if arg_name(call, i) == name:
            return view.ints(a)
    return None


def _effectively_contiguous(t: TensorArg) -> bool:
    """Memory holds the values in logical order: the dims of size > 1 appear in dim order as in the shape."""
    if t.dim_order is None or t.shape is None:
        return True
    big = [d for d in t.dim_order if t.shape[d] != 1]
    return big == sorted(big)


def last_padded_dim(pad: Any, rank: int) -> int:
    """op_constant_pad_nd.cpp:208-213: the last dim with a positive pad (pad[2i], pad[2i+1] pad dim rank-1-i);
    0 when none is padded."""
    last = 0
    pairs = list(pad) if isinstance(pad, (list, tuple)) else []
    for i in range(min(len(pairs) // 2, rank)):
        if int(pairs[2 * i]) + int(pairs[2 * i + 1]) > 0:
            last = max(last, rank - 1 - i)
    return last


def pad_reads_right(t: TensorArg, last: int) -> bool:
    """The portable pad walks dims 0..last with the strides of a contiguous tensor and copies everything
    below `last` as one block: right when the memory holds the values in logical order, or when dims 0..last
    lead the dim order in that order (the block's own order is then copied as it is)."""
    if _effectively_contiguous(t) or t.dim_order is None:
        return True
    return tuple(t.dim_order[:last + 1]) == tuple(range(last + 1))


def _pad_finding(view: ProgramView, call: Call, check: Check, tensors: list[TensorArg]) -> Finding | None:
    rank = len(tensors[0].shape or ())
    pad = call_ints(view, call, "pad") or []
    last = last_padded_dim(pad, rank)
    bad = [t for t in tensors if not pad_reads_right(t, last)]
    if last == 0 or not bad:
        return None
    op = call.target or call.name
    parts = ", ".join(dict.fromkeys(f"{t.name} is {describe(t.dim_order)}" for t in bad))
    return _finding(call, check, "pad-layout-ignored",
                    f"The portable kernel of {op} takes its strides from the logical shape and ignores the dim "
                    f"order: padding dim {last} (pad {list(pad)}) when {parts} gives scrambled values on the "
                    f"target (no error is raised; the outputs are wrong).",
                    "Make the input of the pad contiguous in the model (`.contiguous()` before `F.pad`, or before "
                    "the conv whose `padding=\"same\"` ExecuTorch writes as a pad), or let the quantizer take "
                    "the pad (quantized, it runs on CMSIS-NN's arm_pad, which reads the layout).", bad)


def _evidence(tensors: list[TensorArg]) -> tuple[str, ...]:
    return tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())} {describe(t.dim_order)}"
                 for t in tensors)


def _where(call: Call) -> tuple[str, ...]:
    ev: tuple[str, ...] = (f"program: instruction {call.position}, kernel {call.name}",)
    if call.inserted:
        ev += ("this call was inserted by to_executorch (no node of the final graph emits it)"
               + (f", for %{call.for_node}" if call.for_node else ""),)
    return ev


def _finding(call: Call, check: Check, rule: str, message: str, fix: str, tensors: list[TensorArg]) -> Finding:
    return Finding(node=call.where, rule=rule, message=message, fix=fix, certainty=WILL_FAIL,
                   evidence=_evidence(tensors) + _where(call) + (f"check: {check.kind} at ExecuTorch {check.source}",),
                   op=call.target or call.name, source=check.source)


_FIX_LAYOUT = ("Make the tensors agree in the model: add `.contiguous()` on the input of this op (ExecuTorch "
               "then inserts a dim-order copy, which the runtime supports), or keep the whole block in one "
               "layout (for example feed the model NCHW, or run this op on the last dimension of a reshaped "
               "tensor so it lowers to a CMSIS-NN kernel).")


def _apply(view: ProgramView, call: Call, check: Check, args: dict[str, list[TensorArg]]) -> Finding | None:
    tensors = [t for name in check.args for t in args.get(name, [])]
    if not tensors:
        return None
    op = call.target or call.name
    if check.kind == SAME:
        if len(tensors) < 2 or same_dim_order([t.dim_order for t in tensors]):
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in tensors)
        return _finding(call, check, "dim-order-mismatch",
                        f"The portable kernel of {op} requires all its tensors to share one dim order "
                        f"(all contiguous or all channels-last), but in the program {parts}. {ON_TARGET}",
                        _FIX_LAYOUT, tensors)
    if check.kind == DEFAULT:
        bad = [t for t in tensors if not is_contiguous(t.dim_order)]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in bad)
        return _finding(call, check, "needs-contiguous",
                        f"The portable kernel of {op} only handles contiguous (NCHW) tensors, but in the "
                        f"program {parts}. {ON_TARGET}",
                        "Add `.contiguous()` on the input of this op in the model so ExecuTorch inserts a "
                        "dim-order copy before it, or feed the model NCHW tensors.", bad)
    if check.kind == DEFAULT_OR_CL:
        bad = [t for t in tensors if not (is_contiguous(t.dim_order) or is_channels_last(t.dim_order))]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in bad)
        return _finding(call, check, "unsupported-dim-order",
                        f"The portable kernel of {op} handles only contiguous or channels-last tensors, but "
                        f"{parts}. {ON_TARGET}", "Add `.contiguous()` on the input of this op in the model.", bad)
    if check.kind == IGNORES_DIM_ORDER:
        rank = len(tensors[-1].shape or ())
        dim = call_arg(view, call, "dim")
        dim = 0 if not isinstance(dim, int) else (dim + rank if dim < 0 else dim)
        bad = [t for t in tensors if not _effectively_contiguous(t)]
        if dim == 0 or not bad:
            return None
        parts = ", ".join(dict.fromkeys(f"{t.name} {'are' if t.name == 'tensors' else 'is'} "
                                        f"{describe(t.dim_order)}" for t in bad))
        return _finding(call, check, "layout-ignored",
                        f"The portable kernel of {op} copies whole rows by the logical shape and ignores the "
                        f"dim order: concatenating along dim {dim} when {parts} gives scrambled values on the "
                        f"target (no error is raised; the outputs are wrong).",
                        "Make the inputs of the concatenation contiguous in the model (`.contiguous()` on each, "
                        "ExecuTorch inserts dim-order copies), or concatenate along dim 0.", bad)
    if check.kind == PAD_IGNORES_DIM_ORDER:
        return _pad_finding(view, call, check, tensors)
    if check.kind == RANK:
        bad = [t for t in tensors if t.shape is not None and len(t.shape) not in check.ranks]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {len(t.shape or ())}-D {list(t.shape or ())}" for t in bad)
        ranks = " or ".join(f"{r}-D" for r in check.ranks)
        return _finding(call, check, "unsupported-rank",
                        f"The portable kernel of {op} only handles {ranks} tensors, but {parts}. {ON_TARGET}",
                        "There is no kernel for this rank on the target: reshape to a supported rank in the "
                        "model (e.g. fold the extra dimension into the batch), or drop the op.", bad)
    if check.kind == DTYPE:
        bad = [t for t in tensors if t.dtype not in check.dtypes]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {t.dtype}" for t in bad)
        return _finding(call, check, "unsupported-dtype",
                        f"The portable kernel of {op} has no implementation for {parts} (it handles "
                        f"{', '.join(check.dtypes)}). {ON_TARGET}",
                        "Keep this op in float: exclude it from quantization, or replace it by an op that "
                        "has a CMSIS-NN kernel.", bad)
    return None


def _unchecked(call: Call, args: dict[str, list[TensorArg]]) -> Finding | None:
    """A portable kernel without a table entry whose tensors mix layouts: most portable kernels check
    `tensors_have_same_dim_order`, so this likely fails; the tool has not read this kernel."""
    tensors = [t for ts in args.values() for t in ts if t.dim_order is not None and t.shape]
    if len(tensors) < 2 or same_dim_order([t.dim_order for t in tensors]):
        return None
    return Finding(node=call.where, rule="dim-order-mixed-unverified",
                   message=(f"The tensors of {call.target or call.name} mix dim orders in the program; most "
                            f"portable kernels reject that (tensors_have_same_dim_order), and the pre-flight has "
                            f"no rule read from this kernel's source."),
                   fix=_FIX_LAYOUT, certainty=MAY_FAIL, evidence=_evidence(tensors) + _where(call),
                   op=call.target or call.name)


def kernel_findings(view: ProgramView) -> list[Finding]:
    """Findings for every portable kernel call of the program (match_nodes() has named them)."""
    findings: list[Finding] = []
    for call in view.calls:
        if not call.op.startswith(PORTABLE_NAMESPACES) or not call.target:
            continue
        args = call_tensor_args(view, call)
        checks = checks_for(call.target)
        if checks is None:
            f = _unchecked(call, args)
            if f is not None:
                findings.append(f)
            continue
        for check in checks:
            f = _apply(view, call, check, args)
            if f is not None:
                findings.append(f)
                break          # the kernel stops at its first failing check
    return findings
