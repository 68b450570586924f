"""Pre-flight: rules on the final program that predict what will fail on the target, before any build.

Each finding is a record (node, rule, message, fix, certainty, evidence, source line): the CLI prints
them, `cmlens run` stops on a certain one, the report carries `preflight[]`, the GUI marks the node.

- kernel_rules: each portable kernel's dim-order / dtype checks (read from ExecuTorch's sources, kernels.py)
- program_rules: operators the checkout's runner cannot register; bundled outputs it cannot compare
No torch import here: rules read snapshots and flatbuffer bytes."""
from __future__ import annotations

from pathlib import Path

from ..snapshot.model import GraphSnapshot
from .finding import CERTAINTIES, MAY_FAIL, WILL_FAIL, Finding, certain, for_node
from .cortex_m_rules import cortex_m_findings
from .kernel_rules import kernel_findings
from .measured_rules import measured_findings
from .program_rules import bundle_findings, registry_findings

__all__ = ["CERTAINTIES", "MAY_FAIL", "WILL_FAIL", "Finding", "attach", "certain", "for_node", "check_snapshot",
           "findings_of", "EXTRA_KEY"]

EXTRA_KEY = "preflight"     # GraphSnapshot.extra key holding the findings (as dicts) of a final snapshot


def check_snapshot(final: GraphSnapshot | None, *, bundle: bytes | None = None,
                   et_root: str | Path | None = None, program: bytes | None = None) -> list[Finding]:
    """Every finding for a lowered program: kernel rules on `final`; the bundle rule on a `.bpte`
    (`bundle`, or `program` when it is one); the registry rule when a checkout (`et_root`) and the
    serialised program (`program` or `bundle`) are given."""
    findings: list[Finding] = []
    if final is not None:
        findings.extend(kernel_findings(final))
        findings.extend(cortex_m_findings(final))
        findings.extend(measured_findings(final))
    blob = bundle if bundle is not None else program
    if blob is not None:
        findings.extend(bundle_findings(blob, final))
        if et_root is not None:
            findings.extend(registry_findings(blob, et_root, final))
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
