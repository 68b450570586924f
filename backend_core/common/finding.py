"""A pre-flight finding: something in the final program that fails (or may fail) on the target,
as data with its evidence and a fix, so the CLI, the JSON/HTML report and the GUI show the same thing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WILL_FAIL = "will fail"     # the runtime check is certain to reject this program, and a real failure of the
                            # same check is on record (preflight/rules.py): do not build
MAY_FAIL = "may fail"       # a likely failure the tool cannot prove (no confirming case, an op it has no
                            # rule for, a graph not yet serialised, ...): warn and build
CERTAINTIES = (WILL_FAIL, MAY_FAIL)


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one node (or on the whole program: node == "")."""

    node: str                      # id of the final snapshot's node ("" for program-wide findings)
    rule: str                      # short stable id, e.g. "dim-order-mismatch"
    message: str                   # what will happen on the target, in the user's terms
    fix: str                       # what to change
    certainty: str = MAY_FAIL
    evidence: tuple[str, ...] = ()  # what the rule saw: dim orders, dtypes, source lines
    op: str = ""                   # the operator, as ExecuTorch prints it
    source: str = ""               # the ExecuTorch source line the rule encodes
    check: str = ""                # the runtime check the rule models, in the runtime's terms
    confirmed_by: str = ""         # "will fail": the recorded real failure (UART fixture) the rule rests on
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def certain(self) -> bool:
        return self.certainty == WILL_FAIL

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "rule": self.rule, "message": self.message, "fix": self.fix,
                "certainty": self.certainty, "evidence": list(self.evidence), "op": self.op,
                "source": self.source, "check": self.check, "confirmed_by": self.confirmed_by}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Finding":
        return Finding(node=d.get("node", ""), rule=d["rule"], message=d["message"], fix=d.get("fix", ""),
                       certainty=d.get("certainty", MAY_FAIL), evidence=tuple(d.get("evidence", ())),
                       op=d.get("op", ""), source=d.get("source", ""), check=d.get("check", ""),
                       confirmed_by=d.get("confirmed_by", ""))

    def line(self) -> str:
        """One line for a terminal: `will fail  aten__softmax_default  dim-order-mismatch: ...`."""
        where = self.node or "(program)"
        return f"{self.certainty:9}  {where}  [{self.rule}] {self.message}"


def certain(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.certain]


def for_node(findings: list[Finding], node_id: str) -> list[Finding]:
    return [f for f in findings if f.node == node_id]


@dataclass(frozen=True)
class FindingGroup:
    """The findings of one rule on one op (38 portable batch norms on channels-last input are one group):
    how many, the first nodes, and the one message and fix they share (the first finding's)."""

    first: Finding
    nodes: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.nodes)

    def head(self, shown: int = 3) -> str:
        """`will fail  [needs-contiguous] aten.x ×38: node_a, node_b, node_c, …`"""
        f = self.first
        names = ", ".join(n or "(program)" for n in self.nodes[:shown]) + (", …" if self.count > shown else "")
        times = f" ×{self.count}" if self.count > 1 else ""
        return f"{f.certainty:9}  [{f.rule}] {f.op}{times}: {names}"

    def line(self) -> str:
        """One line for a terminal: the head and the shared message."""
        return f"{self.head()} — {self.first.message}"


def group_findings(findings: list[Finding]) -> list[FindingGroup]:
    """Findings grouped by (certainty, rule, op), in the order the first of each appears."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.certainty, f.rule, f.op), []).append(f)
    return [FindingGroup(fs[0], tuple(x.node for x in fs)) for fs in groups.values()]
