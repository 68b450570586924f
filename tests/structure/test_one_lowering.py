"""One road for a lowering: `lower(` and `LoweringPipeline(` are called only by the job layer's lower
step and by the lowering package itself (its entry, and verify.py's re-lowerings of modified copies).
import-linter forbids importing backend_core.lowering.lower elsewhere; this test reads the calls."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {
    "lower": {"backend_core/orchestration/jobs/steps/lower.py"},
    "lower_source": set(),          # a lowering outside a job: tests and bench/ only, never a face or a step
    "LoweringPipeline": {"backend_core/lowering/lower/rounds.py", "backend_core/lowering/lower/verify.py",
                         "backend_core/analyses/repro/minimize.py"},   # needs the live float export + the failing pass
}


def _calls(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module and any(w in node.module for w in ("lowering", "pipeline", "steps.lower"))
                for alias in node.names if alias.name in ALLOWED}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported:
            found.append((node.func.id, node.lineno))
    return found


def test_only_the_lower_step_lowers() -> None:
    offenders = []
    for pkg in ("backend_core", "app"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name, line in _calls(path):
                if rel not in ALLOWED[name]:
                    offenders.append(f"{rel}:{line} calls {name}(")
    assert not offenders, "a lowering outside the lower step:\n" + "\n".join(offenders)


def test_the_check_sees_a_call(tmp_path: Path) -> None:
    """The scan finds an aliased call (so the test above can fail)."""
    f = tmp_path / "x.py"
    f.write_text("from backend_core.lowering.lower import lower\nlower('ds_cnn')\n"
                 "from backend_core.orchestration.jobs.steps.lower import lower_source\nlower_source('ds_cnn', None)\n")
    assert _calls(f) == [("lower", 2), ("lower_source", 4)]
