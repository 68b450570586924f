"""One request type: the window describes a lowering with backend_core's LowerRequest inside a Job
(app.lowering.session.lowering_job), never with a class of its own (there were four, and they disagreed on
keep_going's default and on no_cache vs use_cache)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOWERING_FIELDS = {"target", "flow", "calib", "channels_last", "keep_going", "no_cache", "use_cache"}


def _lowering_like_classes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            if len(fields & LOWERING_FIELDS) >= 2:
                found.append(f"{node.name} ({', '.join(sorted(fields & LOWERING_FIELDS))})")
    return found


def test_no_app_side_request_class() -> None:
    offenders = [f"{py.relative_to(ROOT)}: {c}" for py in sorted((ROOT / "app").rglob("*.py"))
                 for c in _lowering_like_classes(py)]
    assert not offenders, "a lowering described outside backend_core's LowerRequest:\n" + "\n".join(offenders)


def test_the_scan_sees_a_request_class(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("from dataclasses import dataclass\n@dataclass\nclass LoweringChoice:\n    target: str = 'm55'\n"
                 "    flow: str = 'legacy'\n")
    assert _lowering_like_classes(f) == ["LoweringChoice (flow, target)"]
