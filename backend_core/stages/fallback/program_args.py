"""--keep-going's workaround for an int-list argument the lowered program holds as a bare int (the
pre-flight's int-list-given-int: ExecuTorch's RemoveGetItemPass writes `amax(x, 1)` for `x.max(dim=1)[0]`, and
the runtime aborts reading it). The same value written as the list PyTorch means by it (`int[1] dim=1` is
`[1]`; an `int[2]` given `k` is `[k, k]`), on the lowered program: nothing else changes."""
from __future__ import annotations

import re
from typing import Any

from backend_core.common.snapshot.schema_args import list_args

NAME = "int_lists_in_program"
DESCRIPTION = ("every int-list argument the lowered program held as a single int written as the list it means "
               "(`dim=1` → `dim=[1]`; same values)")


def int_lists(program: Any, findings: list[Any]) -> dict[str, dict[str, Any]]:
    """Edit `program` in place for the certain int-list-given-int findings; {node: {"rule", "args"}}."""
    nodes = {n.name: n for n in program.graph_module.graph.nodes}
    done: dict[str, dict[str, Any]] = {}
    for f in findings:
        n = nodes.get(f.node)
        if not (f.certain and f.rule == "int-list-given-int") or n is None or f.node in done:
            continue
        args = list(n.args)
        changed = []
        for pos, name, typ in list_args(str(getattr(n.target, "_schema", ""))):
            if pos < len(args) and isinstance(args[pos], int) and not isinstance(args[pos], bool):
                size = re.search(r"\[(\d*)\]", typ)
                args[pos] = [args[pos]] * (int(size.group(1)) if size and size.group(1) else 1)
                changed.append(f"{name}={args[pos]}")
        if changed:
            n.args = tuple(args)
            done[f.node] = {"rule": f.rule, "op": f.op, "args": changed}
    if done:
        program.graph_module.recompile()
    return done
