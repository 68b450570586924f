"""Views that read another layout's bytes. ExecuTorch's ReplaceViewCopyWithViewPass (exir/passes/
replace_view_copy_with_view_pass.py, run by to_executorch) turns every view_copy that does not feed the
output into a memory view of its base: the view shares the base's buffer and gets contiguous strides, and
no kernel runs, so the portable view_copy's dim-order checks (op_view_copy.cpp:47, 50) never do. When the
base is channels-last, the view reads NHWC bytes as NCHW: no error, wrong values. Found on QEMU M55 on
timm EfficientViT's `feat.view(B, -1, H, W)` of a conv output (tests/preflight/models/view_of_channels_last.py)."""
from __future__ import annotations

from backend_core.common.finding import WILL_FAIL, Finding
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.analyses.preflight.cortex_m_rules import memory_order
from backend_core.analyses.preflight.dim_order import describe
from backend_core.analyses.preflight.program_view import ProgramView, output_dim_orders

VIEW_PASS = "exir/passes/replace_view_copy_with_view_pass.py:286"


def view_alias_findings(view: ProgramView, final: GraphSnapshot) -> list[Finding]:
    """A finding for every view_copy the program made a memory view of a base that is not in the default
    dim order (size-1 dims aside: a [1, C, 1, 1] tensor is the same bytes either way)."""
    called = {c.where for c in view.calls}
    by_id = {n.id: n for n in final.nodes}
    stored = output_dim_orders(view)     # the program's own dim orders (the graph's meta can be stale)
    findings: list[Finding] = []
    for n in final.nodes:
        if n.target != "aten.view_copy.default" or n.id in called or not n.inputs:
            continue
        base = by_id.get(n.inputs[0])
        if base is None or base.shape is None or base.dim_order is None:
            continue
        shape, order = tuple(base.shape), tuple(stored.get(base.id) or base.dim_order)
        if memory_order(shape, order) == memory_order(shape, tuple(range(len(shape)))):
            continue
        where = f" at {n.source.short}" if n.source else ""
        findings.append(Finding(
            node=n.id, rule="view-of-channels-last",
            message=(f"The view{where} ({list(shape)} → {list(n.shape or ())}) becomes a memory view of its base in "
                     f"the program (to_executorch's ReplaceViewCopyWithViewPass: no kernel runs, the view shares the "
                     f"buffer and is read as contiguous), but the base %{base.id} is {describe(order)}: its bytes are "
                     f"in NHWC order and are read as NCHW. On the target the method runs without an error and gives "
                     f"wrong values."),
            fix=("Make the base contiguous before the view (`x.contiguous().view(...)`, or `.reshape` of a "
                 "`.contiguous()` tensor), and if what follows wants channels-last, "
                 "`.clone(memory_format=torch.channels_last)` after it; cmlens lower --keep-going makes both changes "
                 "on a copy of the export."),
            certainty=WILL_FAIL, op="aten.view_copy.default", source=VIEW_PASS,
            evidence=(f"base = %{base.id}: {base.dtype} {list(shape)} {describe(order)}",
                      f"view = %{n.id}: {list(n.shape or ())} contiguous (0, 1, ...), no kernel call in the program",
                      f"ExecuTorch {VIEW_PASS}: node.target = memory.view, _ViewSpec with contiguous strides")))
    return findings
