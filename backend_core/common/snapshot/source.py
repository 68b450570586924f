"""Pick the user's own file and line out of an FX node's stack trace, skipping framework
frames (torch, torchao, ExecuTorch's compiler, this tool)."""
from __future__ import annotations

import re

from backend_core.common.snapshot.model import SourceLocation

# The code line is optional: torch formats frames through linecache, which in a long-lived process (the
# window's worker, a test) still holds a file's old text after an edit: a line past its old end comes back empty.
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)(?:\n(?!\s*File ")(?P<code>[^\n]*))?')

_FRAMEWORK_MARKERS = (
    "/torch/", "/torchao/", "/executorch/exir/", "/executorch/backends/", "/executorch/devtools/",
    "/backend_core/stages/pipeline/", "/backend_core/common/snapshot/", "/backend_core/analyses/numerics/", "/contextlib.py",
    "/functools.py", "<frozen", "/site-packages/_pytest/",
    "/threading.py", "/runpy.py",
)


def is_framework_frame(path: str) -> bool:
    return any(m in path for m in _FRAMEWORK_MARKERS)


def user_source(stack_trace: str | None) -> SourceLocation | None:
    """The innermost frame that belongs to model code (the line that made the op, inside a helper when a
    helper made it), with the chain of calls from the outermost model frame (the user's own line) down to
    it; None when there is none."""
    if not stack_trace:
        return None
    frames = [m for m in _FRAME.finditer(stack_trace) if not is_framework_frame(m.group("file"))]
    if not frames:
        return None
    last = frames[-1]
    chain = tuple(f"{m.group('file')}:{m.group('line')} in {m.group('func').strip()}: {_code(m)}"
                  for i, m in enumerate(frames[:-1]) if i == 0 or m.group("func").strip() == "forward")
    return SourceLocation(file=last.group("file"), line=int(last.group("line")), code=_code(last),
                          function=last.group("func").strip(), chain=chain)


def _code(frame: re.Match) -> str:
    """The frame's code line: as the trace has it, else read from the file as it is now."""
    code = (frame.group("code") or "").strip()
    if not code:
        import linecache

        linecache.checkcache(frame.group("file"))
        code = linecache.getline(frame.group("file"), int(frame.group("line"))).strip()
    return code


def module_path_from_stack(nn_module_stack: dict | None) -> tuple[str, str]:
    """(path, type name) of the innermost nn.Module, e.g. ("blocks.2.conv", "Conv2d")."""
    if not nn_module_stack:
        return "", ""
    path, typ = list(nn_module_stack.values())[-1]
    path = normalise_module_path(str(path))
    typ_name = typ if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
    typ_name = typ_name.rsplit(".", 1)[-1]
    if "<locals>" in str(typ) and not path:
        return "", ""   # export's own wrapper module, not the user's
    return path, typ_name


def normalise_module_path(path: str) -> str:
    """`L['self'].features._modules['3'].conv` -> `features.3.conv`."""
    path = path.replace("L['self']", "").replace("L__self__", "")
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"getattr\(([^,]+), '([^']+)'\)", r"\1.\2", path)
    return path.strip(".")
