"""What a failing pass was doing, read from the live objects before they are gone: the FX node it
was processing (from the traceback's frames), that node's operands (shape, dtype, dim order, from
their fake tensors) and the check in ExecuTorch's own source that raised (file:line + the statement).

Only facts here; backend_core.stages.fallback.pass_failure turns them into the user's terms."""
from __future__ import annotations

import linecache
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any



@dataclass
class Operand:
    """One tensor argument of the failing node, as the failing check saw it."""

    index: int
    name: str                         # the FX node feeding it
    target: str                       # that node's op
    shape: list[int] | None = None
    stride: list[int] | None = None
    dtype: str | None = None
    dim_order: list[int] | None = None
    debug_handle: int | None = None


@dataclass
class LiveFailure:
    """The facts of a pass failure: the node, its operands and ExecuTorch's failed check."""

    stage: str
    node: str | None = None
    target: str = ""
    debug_handle: int | None = None
    stack_trace: str = ""
    module_stack: list[str] = field(default_factory=list)
    operands: list[Operand] = field(default_factory=list)
    error_type: str = ""
    error: str = ""                    # the root error's message (first line)
    check_file: str = ""               # ExecuTorch source file:line of the raising frame
    check_code: str = ""               # the statement there (an assert's condition, a raise)
    check_function: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def exception_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the errors it wraps (ExecuTorch's pass manager wraps a pass's error)."""
    chain = [exc]
    while True:
        nxt = chain[-1].__cause__ or chain[-1].__context__
        if nxt is None or any(nxt is e for e in chain):
            return chain
        chain.append(nxt)


def failing_fx_node(exc: BaseException) -> Any:
    """The FX node a pass was working on when it raised: the innermost frame holding `node`,
    in the first error of the chain that has one."""
    for e in exception_chain(exc):
        found = None
        tb = e.__traceback__
        while tb is not None:
            cand = tb.tb_frame.f_locals.get("node")
            if hasattr(cand, "op") and hasattr(cand, "graph") and hasattr(cand, "name"):
                found = cand
            tb = tb.tb_next
        if found is not None:
            return found
    return None


def _statement(path: str, line: int) -> str:
    """The source statement starting at `line` (an assert spanning lines is read until its
    brackets close), without the message part of an assert."""
    text, depth, n = "", 0, line
    while n < line + 12:
        ln = linecache.getline(path, n)
        if not ln:
            break
        text += ("\n" if text else "") + ln.rstrip()
        depth += sum(ln.count(c) for c in "([{") - sum(ln.count(c) for c in ")]}")
        if depth <= 0:
            break
        n += 1
    stripped = text.strip()
    if stripped.startswith("assert ") and "," in stripped:
        # keep the condition only: the message is quoted as the error text already
        cond = stripped.split("\n", 1)[0]
        return cond.rstrip(" (").rstrip(",")
    return " ".join(part.strip() for part in stripped.splitlines())


_HELPERS = ("_check", "_check_with", "_check_type")


def _raising_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the root error that is a check (an assert in ExecuTorch's op
    definitions, a torch._check in a meta kernel), skipping torch's _check helpers themselves."""
    frames = [f for f in traceback.extract_tb(exception_chain(exc)[-1].__traceback__)
              if f.name not in _HELPERS]
    return frames[-1] if frames else None


def _operand(i: int, a: Any) -> Operand:
    from backend_core.common.snapshot.capture import target_name

    val = a.meta.get("val")
    op = Operand(index=i, name=a.name,
                 target=target_name(a.target) if a.op == "call_function" else a.op,
                 debug_handle=a.meta.get("debug_handle"))
    if hasattr(val, "shape") and hasattr(val, "stride"):
        op.shape = [int(s) for s in val.shape]
        op.stride = [int(s) for s in val.stride()]
        op.dtype = str(val.dtype).replace("torch.", "")
        try:
            op.dim_order = [int(d) for d in val.dim_order()]
        except Exception:  # noqa: BLE001 - ambiguous strides: leave unknown rather than guess
            op.dim_order = None
    return op


def capture_failure(stage: str, exc: BaseException) -> LiveFailure:
    """Read the failing node and ExecuTorch's check from `exc` (call inside the except block)."""
    from backend_core.common.snapshot.capture import target_name
    from backend_core.common.snapshot.source import normalise_module_path

    root = exception_chain(exc)[-1]
    msg = str(root).strip().splitlines()
    lf = LiveFailure(stage=stage, error_type=type(root).__name__, error=msg[0] if msg else "")
    fr = _raising_frame(exc)
    if fr is not None and fr.lineno is not None:
        lf.check_file = f"{fr.filename}:{fr.lineno}"
        lf.check_code = _statement(fr.filename, fr.lineno) or (fr.line or "")
        lf.check_function = fr.name
    node = failing_fx_node(exc)
    if node is None:
        return lf
    lf.node = node.name
    lf.target = target_name(node.target) if node.op == "call_function" else str(node.target)
    lf.debug_handle = node.meta.get("debug_handle")
    lf.stack_trace = node.meta.get("stack_trace") or ""
    lf.module_stack = [normalise_module_path(str(p)) for p, _t in (node.meta.get("nn_module_stack") or {}).values()]
    tensors = [a for a in node.args if hasattr(a, "op") and hasattr(a, "meta")]
    lf.operands = [_operand(i, a) for i, a in enumerate(tensors)]
    return lf
