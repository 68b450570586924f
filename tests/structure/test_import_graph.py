"""The house has rooms: no module imports itself back through others (lazy imports inside functions
count too), and the layer contracts of pyproject.toml hold (`lint-imports`, also run by `make test`)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


def test_no_import_cycles_in_app_backend_core_or_resources() -> None:
    graph = grimp.build_graph("app", "backend_core", "resources", include_external_packages=False)
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported.startswith(importer + "."):
                continue            # a package's __init__ re-exporting its own modules is not a cycle
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back and not importer.startswith(imported + "."):
                cycles.append(" -> ".join((importer, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_layer_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is not installed (make setup)"
    proc = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
