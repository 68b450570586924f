"""The int-list arguments of an operator schema string, as ExecuTorch prints it (`aten::amax(Tensor self,
int[1] dim=[], bool keepdim=False) -> Tensor`): the pre-flight checks what the program holds for them, and
--keep-going writes a bare int there as its list."""
from __future__ import annotations

import re

_ARG = re.compile(r"^\s*(?P<type>[\w\[\]\d?]+)\s+(?P<name>\w+)")


def list_args(schema: str) -> list[tuple[int, str, str]]:
    """(position, name, type) of every int-list argument (`int[]`, `int[1]`, `SymInt[]`, not optional) of a
    schema string `ns::op(Tensor self, int[1] dim=[], ...) -> ...`, positional arguments only."""
    m = re.search(r"\((.*)\)\s*->", schema)
    if not m:
        return []
    out = []
    for i, part in enumerate(a for a in m.group(1).split(",")):
        if part.strip() == "*":
            break
        arg = _ARG.match(part)
        if arg and re.fullmatch(r"(Sym)?[Ii]nt\[\d*\]", arg.group("type")):
            out.append((i, arg.group("name"), arg.group("type")))
    return out
