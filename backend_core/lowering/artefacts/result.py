"""What opening an artefact gives: the snapshots (stages) the views show, plus what only an
artefact has (the program bytes, its memory plan, a bundle's test cases, an ETDump's overlay)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

TARGET_UNKNOWN = "unknown (read from the program)"


@dataclass
class ArtefactResult:
    path: str
    kind: str                                     # pte | bpte | etrecord | etdump
    snapshots: list[GraphSnapshot]
    program: bytes | None = None                  # the .pte bytes (from a .pte, a .bpte, or linked)
    program_path: str | None = None
    memory_plan: dict[str, Any] = field(default_factory=dict)
    bundled: list[dict[str, Any]] = field(default_factory=list)   # a .bpte's test cases
    overlay: dict[str, Any] | None = None         # ETDump: {"profile": {...}, "gaps": {...}}
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    from_cache: bool = False

    @property
    def name(self) -> str:
        from pathlib import Path

        return Path(self.path).name

    @property
    def final(self) -> GraphSnapshot | None:
        return self.snapshots[-1] if self.snapshots and self.snapshots[-1].kind == "final" else None

    def fallbacks(self) -> list[NodeSnapshot]:
        f = self.final
        return f.fallbacks() if f else []

    def extras(self) -> dict[str, Any]:
        """The artefact-only parts, JSON-ready (the report's "artefact" object, the worker's result)."""
        return {"kind": self.kind, "path": self.path, "program_path": self.program_path,
                "program_bytes": len(self.program) if self.program else None,
                "memory_plan": self.memory_plan, "bundled": self.bundled, "overlay": self.overlay,
                "notes": list(self.notes)}

    def report(self, *, with_graphs: bool = True) -> dict[str, Any]:
        """The lowering report's shape (stages, fallbacks[]) plus an "artefact" object."""
        from backend_core.analyses.report.json_report import ReportSubject, build_report
        from backend_core.common.versions import stack_versions

        rep = build_report(ReportSubject(self.name, self.path, TARGET_UNKNOWN, self.kind, "done", list(self.snapshots),
                                         planned_stages=[s.stage for s in self.snapshots]),
                           versions=stack_versions(), with_graphs=with_graphs)
        rep["artefact"] = self.extras()
        return rep

    def to_cache(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "snapshots": list(self.snapshots),
                "program_path": self.program_path, "memory_plan": self.memory_plan,
                "bundled": self.bundled, "overlay": self.overlay, "notes": self.notes}

    @staticmethod
    def from_cached(d: dict[str, Any], program: bytes | None) -> "ArtefactResult":
        return ArtefactResult(d["path"], d["kind"], list(d["snapshots"]), program, d.get("program_path"),
                              d.get("memory_plan", {}), d.get("bundled", []), d.get("overlay"),
                              list(d.get("notes", [])), from_cache=True)
