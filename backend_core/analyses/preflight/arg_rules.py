"""Arguments the program stores with a type the kernel does not read. A kernel's `int[]` argument is read
with EValue::toIntList(), which aborts when the program stores a single Int there (runtime/core/evalue.h:411,
"EValue is not an Int List"). Eager PyTorch accepts a bare int for an `int[1]` (amax(x, 1)), and ExecuTorch
1.5.1's RemoveGetItemPass writes one when it turns `x.max(dim=1)[0]` into aten.amax: the emitter keeps the
Int, and the method aborts on its first run. Found on QEMU M55 on pytorchcv's SINet
(tests/preflight/models/max_dim.py is its 12-line case)."""
from __future__ import annotations

import re

from backend_core.common.finding import WILL_FAIL, Finding
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.common.snapshot.schema_args import list_args

EVALUE = "runtime/core/evalue.h:411"
def bare_int_findings(final: GraphSnapshot) -> list[Finding]:
    """A finding for every node whose int-list argument the graph holds as a bare int."""
    findings: list[Finding] = []
    for n in final.nodes:
        if n.fx_op != "call_function" or not n.schema:
            continue
        for pos, name, typ in list_args(n.schema):
            if pos >= len(n.args) or not re.fullmatch(r"-?\d+", n.args[pos].strip()):
                continue
            where = f" at {n.source.short}" if n.source else ""
            findings.append(Finding(
                node=n.id, rule="int-list-given-int",
                message=(f"{n.target}{where} gets `{name}={n.args[pos]}`, a single int, for its `{typ} {name}` "
                         f"argument: the program stores an Int there and the kernel reads an int list "
                         f"(EValue::toIntList), so the runtime aborts on the first run (\"EValue is not an Int "
                         f"List\"; ExecuTorch's RemoveGetItemPass writes this for `x.max(dim=d)[0]`)."),
                fix=(f"Write the reduction with a list (`torch.amax(x, dim=[{n.args[pos]}])` in place of "
                     f"`x.max(dim={n.args[pos]})[0]`); cmlens lower --keep-going writes `[{n.args[pos]}]` into the "
                     f"lowered program."),
                certainty=WILL_FAIL, op=n.target, source=EVALUE,
                evidence=(f"%{n.id}: {n.schema}", f"argument {pos} ({name}) = {n.args[pos]}")))
            break
    return findings
