"""Pre-flight: rules on the serialised program that predict what will fail on the target, before any build.

Each finding is a record (node, rule, message, fix, certainty, the runtime check it models, the
confirming case it rests on, evidence, source line): the CLI prints them, `cmlens run` stops on a
"will fail", the report carries `preflight[]`, the GUI marks the node.

- program_view: the program's kernel calls and tensors as the runtime builds them, matched to the nodes
- kernel_rules: each portable kernel's dim-order / dtype / rank checks (read from ExecuTorch's sources, kernels.py)
- cortex_m_rules: the cortex_m kernels' channels-last checks
- program_rules: operators the checkout's runner cannot register (without a checkout: those ExecuTorch's own
  kernel lists lack); bundled outputs it cannot compare
- measured_rules: configurations measured to give wrong numbers ("may fail")
- arg_rules: int-list arguments the program stores as a single Int (the runtime aborts reading them)
- rules: the rule table; only a rule with a recorded real failure may say "will fail"
No torch import here: rules read snapshots and flatbuffer bytes."""
from __future__ import annotations

from pathlib import Path

from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.common.finding import CERTAINTIES, MAY_FAIL, WILL_FAIL, Finding, certain, for_node
from backend_core.analyses.preflight.cortex_m_rules import (cortex_m_findings, dim_order_blind_findings, int8_operand_findings,
                             transpose_rank_findings)
from backend_core.analyses.preflight.arg_rules import bare_int_findings
from backend_core.analyses.preflight.view_rules import view_alias_findings
from backend_core.analyses.preflight.kernel_rules import kernel_findings
from backend_core.analyses.preflight.measured_rules import measured_findings
from backend_core.analyses.preflight.program_rules import bundle_findings, portable_gap_findings, registry_findings
from backend_core.analyses.preflight.program_view import match_nodes, read_program
from backend_core.analyses.preflight.rules import settle

__all__ = ["CERTAINTIES", "MAY_FAIL", "WILL_FAIL", "Finding", "attach", "certain", "for_node", "check_snapshot",
           "findings_of", "EXTRA_KEY"]

EXTRA_KEY = "preflight"     # GraphSnapshot.extra key holding the findings (as dicts) of a final snapshot


def check_snapshot(final: GraphSnapshot | None, *, bundle: bytes | None = None,
                   et_root: str | Path | None = None, program: bytes | None = None) -> list[Finding]:
    """Every finding for a lowered program. The kernel rules need both the final snapshot (to name the
    nodes) and the serialised program (`program` or `bundle`: what the runtime will see; the graph
    before `to_executorch` is not it); the measured rules read `final` alone; the bundle rule reads a
    `.bpte`; the registry rule needs a checkout (`et_root`) and the program."""
    findings: list[Finding] = []
    blob = bundle if bundle is not None else program
    if final is not None:
        if blob is not None:
            view = match_nodes(read_program(blob), final)
            findings.extend(kernel_findings(view))
            findings.extend(cortex_m_findings(view))
            findings.extend(int8_operand_findings(view))
            findings.extend(dim_order_blind_findings(view))
            findings.extend(transpose_rank_findings(view))
            findings.extend(view_alias_findings(view, final))
            findings.extend(bare_int_findings(final))
        findings.extend(measured_findings(final))
    if blob is not None:
        findings.extend(bundle_findings(blob, final))
        if et_root is not None:
            findings.extend(registry_findings(blob, et_root, final))
        else:       # no checkout: what ExecuTorch's own kernel lists lack fails on every checkout
            findings.extend(portable_gap_findings(blob, final))
    findings = [settle(f) for f in findings]
    findings.sort(key=lambda f: (not f.certain, _order(final, f.node)))
    return findings


def _order(final: GraphSnapshot | None, node: str) -> int:
    if final is None or not node:
        return -1
    for i, n in enumerate(final.nodes):
        if n.id == node:
            return i
    return len(final.nodes)


def findings_of(final: GraphSnapshot | None) -> list[Finding]:
    """The findings the lowering stored on its final snapshot (see lowering.lower)."""
    if final is None:
        return []
    return [Finding.from_dict(d) for d in final.extra.get(EXTRA_KEY, [])]


def attach(final: GraphSnapshot | None, findings: list[Finding]) -> None:
    """Store `findings` on the final snapshot (its `extra`, so they travel with it through the cache,
    the worker protocol and the JSON report), keeping earlier ones and dropping duplicates."""
    if final is None:
        return
    have = final.extra.get(EXTRA_KEY, [])
    seen = {(d["node"], d["rule"], d.get("source", "")) for d in have}
    new = [f.to_dict() for f in findings if (f.node, f.rule, f.source) not in seen]
    final.extra[EXTRA_KEY] = have + new
