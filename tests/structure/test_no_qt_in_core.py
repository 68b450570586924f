"""backend_core must stay importable without Qt (the CLI, CI gates and the worker use it)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "backend_core"
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "qtpy", "pyqtgraph", "shiboken6")


def test_no_module_in_backend_core_imports_qt() -> None:
    offenders = []
    for f in CORE.rglob("*.py"):
        tree = ast.parse(f.read_text(), filename=str(f))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in QT_MODULES:
                    offenders.append(f"{f.relative_to(CORE.parent)}:{node.lineno} imports {n}")
    assert not offenders, "Qt imported in backend_core:\n" + "\n".join(offenders)


def test_importing_every_core_module_loads_no_qt() -> None:
    mods = sorted(".".join(f.relative_to(CORE.parent).with_suffix("").parts)
                  for f in CORE.rglob("*.py") if f.name != "__main__.py"
                  and "migrations" not in f.parts)       # Alembic's scripts: run by Alembic, not importable
    mods = [m.removesuffix(".__init__") for m in mods]
    code = ("import importlib, sys\n"
            f"for m in {mods!r}:\n    importlib.import_module(m)\n"
            f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
            "print(bad)\nsys.exit(1 if bad else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=CORE.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
