"""Rules on the portable kernels of the final graph: each node's tensors (dtype, dim order, as the
.pte will store them) against what that kernel checks at run time (kernels.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..snapshot.classify import namespace
from ..snapshot.model import GraphSnapshot, NodeSnapshot
from .dim_order import describe, is_channels_last, is_contiguous, same_dim_order
from .finding import MAY_FAIL, WILL_FAIL, Finding
from .kernels import DEFAULT, DEFAULT_OR_CL, DTYPE, IGNORES_DIM_ORDER, RANK, SAME, Check, checks_for

# What the target does when a kernel check fails (kernel sets InvalidArgument; Method::execute
# returns it; the Arm runner reports it and stops).
ON_TARGET = ("On the target the kernel returns InvalidArgument and the method fails "
             "(\"Execution of method forward failed with status 0x12\").")
PORTABLE_NAMESPACES = ("aten",)
_KWARG = re.compile(r"^([A-Za-z_]\w*)=")


@dataclass(frozen=True)
class TensorArg:
    name: str                 # schema argument name, or "out"
    node: str                 # the snapshot node that produces it
    dtype: str | None
    shape: tuple[int, ...] | None
    dim_order: tuple[int, ...] | None


def schema_arg_names(schema: str) -> list[str]:
    """`aten::cat(Tensor[] tensors, int dim=0) -> Tensor` -> ["tensors", "dim"] (keyword-only too)."""
    m = re.match(r"^[^(]*\((.*)\)\s*->", schema)
    if not m:
        return []
    names, depth, cur = [], 0, ""
    for ch in m.group(1) + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if not part or part == "*":
                continue
            decl = part.split("=", 1)[0].strip()
            names.append(decl.split()[-1])
        else:
            cur += ch
    return names


def tensor_args(node: NodeSnapshot, final: GraphSnapshot) -> dict[str, list[TensorArg]]:
    """The node's tensor arguments by schema name (a Tensor[] gives several), plus `out`."""
    names = schema_arg_names(node.schema)
    by_index: dict[int, list[str]] = {}
    for e in final.edges:
        if e.dst == node.id:
            by_index.setdefault(e.arg_index, []).append(e.src)
    out: dict[str, list[TensorArg]] = {}
    for i, srcs in sorted(by_index.items()):
        text = node.args[i] if i < len(node.args) else ""
        kw = _KWARG.match(text)
        name = kw.group(1) if kw else (names[i] if i < len(names) else f"arg{i}")
        for src_id in srcs:
            src = final.node(src_id)
            if src is None or src.dtype is None:
                continue
            out.setdefault(name, []).append(TensorArg(name, src.id, src.dtype, src.shape, src.dim_order))
    if node.dtype is not None:
        out["out"] = [TensorArg("out", node.id, node.dtype, node.shape, node.dim_order)]
    return out


def _dim_arg(node: NodeSnapshot, rank: int) -> int:
    """The op's `dim` argument (schema default 0), made non-negative."""
    names = schema_arg_names(node.schema)
    i = names.index("dim") if "dim" in names else -1
    text = node.args[i] if 0 <= i < len(node.args) else "0"
    text = text.split("=", 1)[-1]
    try:
        d = int(text)
    except ValueError:
        return 0
    return d + rank if d < 0 else d


def _effectively_contiguous(t: TensorArg) -> bool:
    """Memory holds the values in logical order: the dims of size > 1 appear in dim order as in the shape."""
    if t.dim_order is None or t.shape is None:
        return True
    big = [d for d in t.dim_order if t.shape[d] != 1]
    return big == sorted(big)


def _feeds_output(node: NodeSnapshot, final: GraphSnapshot) -> bool:
    outputs = {n.id for n in final.nodes if n.fx_op == "output"}
    return any(e.src == node.id and e.dst in outputs for e in final.edges)


def _evidence(tensors: list[TensorArg]) -> tuple[str, ...]:
    return tuple(f"{t.name} = %{t.node}: {t.dtype} {list(t.shape or ())} {describe(t.dim_order)}"
                 for t in tensors)


def _finding(node: NodeSnapshot, check: Check, rule: str, message: str, fix: str,
             tensors: list[TensorArg]) -> Finding:
    return Finding(node=node.id, rule=rule, message=message, fix=fix, certainty=WILL_FAIL,
                   evidence=_evidence(tensors) + (f"check: {check.kind} at ExecuTorch {check.source}",),
                   op=node.target, source=check.source)


_FIX_LAYOUT = ("Make the tensors agree in the model: add `.contiguous()` on the input of this op (ExecuTorch "
               "then inserts a dim-order copy, which the runtime supports), or keep the whole block in one "
               "layout (for example feed the model NCHW, or run this op on the last dimension of a reshaped "
               "tensor so it lowers to a CMSIS-NN kernel).")


def _apply(node: NodeSnapshot, check: Check, args: dict[str, list[TensorArg]]) -> Finding | None:
    tensors = [t for name in check.args for t in args.get(name, [])
               if t.dim_order is not None or check.kind in (DTYPE, RANK)]
    if not tensors:
        return None
    op = node.target
    if check.kind == SAME:
        if len(tensors) < 2 or same_dim_order([t.dim_order for t in tensors]):
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in tensors)
        return _finding(node, check, "dim-order-mismatch",
                        f"The portable kernel of {op} requires all its tensors to share one dim order "
                        f"(all contiguous or all channels-last), but {parts}. {ON_TARGET}",
                        _FIX_LAYOUT, tensors)
    if check.kind == DEFAULT:
        bad = [t for t in tensors if not is_contiguous(t.dim_order)]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in bad)
        return _finding(node, check, "needs-contiguous",
                        f"The portable kernel of {op} only handles contiguous (NCHW) tensors, but {parts}. "
                        f"{ON_TARGET}",
                        "Add `.contiguous()` on the input of this op in the model so ExecuTorch inserts a "
                        "dim-order copy before it, or feed the model NCHW tensors.", bad)
    if check.kind == DEFAULT_OR_CL:
        bad = [t for t in tensors if not (is_contiguous(t.dim_order) or is_channels_last(t.dim_order))]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {describe(t.dim_order)}" for t in bad)
        return _finding(node, check, "unsupported-dim-order",
                        f"The portable kernel of {op} handles only contiguous or channels-last tensors, but "
                        f"{parts}. {ON_TARGET}", "Add `.contiguous()` on the input of this op in the model.", bad)
    if check.kind == IGNORES_DIM_ORDER:
        dim = _dim_arg(node, len(tensors[-1].shape or ()))
        bad = [t for t in tensors if not _effectively_contiguous(t)]
        if dim == 0 or not bad:
            return None
        parts = ", ".join(dict.fromkeys(f"{t.name} {'are' if t.name == 'tensors' else 'is'} "
                                        f"{describe(t.dim_order)}" for t in bad))
        return _finding(node, check, "layout-ignored",
                        f"The portable kernel of {op} copies whole rows by the logical shape and ignores the "
                        f"dim order: concatenating along dim {dim} when {parts} gives scrambled values on the "
                        f"target (no error is raised; the outputs are wrong).",
                        "Make the inputs of the concatenation contiguous in the model (`.contiguous()` on each, "
                        "ExecuTorch inserts dim-order copies), or concatenate along dim 0.", bad)
    if check.kind == RANK:
        bad = [t for t in tensors if t.shape is not None and len(t.shape) not in check.ranks]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {len(t.shape or ())}-D {list(t.shape or ())}" for t in bad)
        ranks = " or ".join(f"{r}-D" for r in check.ranks)
        return _finding(node, check, "unsupported-rank",
                        f"The portable kernel of {op} only handles {ranks} tensors, but {parts}. {ON_TARGET}",
                        "There is no kernel for this rank on the target: reshape to a supported rank in the "
                        "model (e.g. fold the extra dimension into the batch), or drop the op.", bad)
    if check.kind == DTYPE:
        bad = [t for t in tensors if t.dtype not in check.dtypes]
        if not bad:
            return None
        parts = ", ".join(f"{t.name} is {t.dtype}" for t in bad)
        return _finding(node, check, "unsupported-dtype",
                        f"The portable kernel of {op} has no implementation for {parts} (it handles "
                        f"{', '.join(check.dtypes)}). {ON_TARGET}",
                        "Keep this op in float: exclude it from quantization, or replace it by an op that "
                        "has a CMSIS-NN kernel.", bad)
    return None


def _unchecked(node: NodeSnapshot, args: dict[str, list[TensorArg]]) -> Finding | None:
    """A portable op without a table entry whose tensors mix layouts: most portable kernels check
    `tensors_have_same_dim_order`, so this likely fails; the tool has not read this kernel."""
    tensors = [t for ts in args.values() for t in ts if t.dim_order is not None and t.shape]
    if len(tensors) < 2 or same_dim_order([t.dim_order for t in tensors]):
        return None
    return Finding(node=node.id, rule="dim-order-mixed-unverified",
                   message=(f"The tensors of {node.target} mix dim orders; most portable kernels reject that "
                            f"(tensors_have_same_dim_order), and the pre-flight has no rule read from this "
                            f"kernel's source."),
                   fix=_FIX_LAYOUT, certainty=MAY_FAIL, evidence=_evidence(tensors), op=node.target)


def kernel_findings(final: GraphSnapshot) -> list[Finding]:
    """Findings for every portable-kernel node of the final graph."""
    findings: list[Finding] = []
    for node in final.nodes:
        if node.fx_op != "call_function" or namespace(node.target) not in PORTABLE_NAMESPACES:
            continue
        args = tensor_args(node, final)
        checks = checks_for(node.target)
        if checks is None:
            f = _unchecked(node, args)
            if f is not None:
                findings.append(f)
            continue
        for check in checks:
            if check.only_if_feeds_output and not _feeds_output(node, final):
                continue
            f = _apply(node, check, args)
            if f is not None:
                findings.append(f)
                break          # the kernel stops at its first failing check
    return findings
