"""One meaning per word (docs/architecture.md, Glossary): the words the glossary gives one meaning are not
used for another in the code. Fails when a new name brings a second meaning back."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("backend_core", "app")


def _names() -> list[tuple[str, str]]:
    """(file, name) of every class, function, argument and attribute assigned in the product's code."""
    out = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            tree = ast.parse(path.read_text())
            rel = str(path.relative_to(ROOT))
            for n in ast.walk(tree):
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((rel, n.name))
                if isinstance(n, ast.arg):
                    out.append((rel, n.arg))
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                    out.append((rel, n.attr))
    return out


def test_verdict_is_only_what_the_judge_says_of_a_run() -> None:
    bad = [(f, n) for f, n in _names() if n.endswith("Verdict") and n != "Verdict"
           or n.endswith("Verdicts")]
    assert not bad, f"'verdict' is the judge's word for a run (a memory fit is a fit, the quantizer's are decisions): {bad}"


def test_cancel_has_one_spelling() -> None:
    bad = [(f, n) for f, n in _names() if n in ("should_stop", "stop_requested", "ShouldStop")]
    assert not bad, f"a cancel is asked with cancel(), read as cancel_event or is_cancelled: {bad}"


def test_runner_is_the_firmware() -> None:
    """In the window, a QtJob is a job slot and a thread a background: `runner` names the firmware only."""
    bad = [(f, n) for f, n in _names() if f.startswith("app/") and n == "runner"]
    assert not bad, bad
