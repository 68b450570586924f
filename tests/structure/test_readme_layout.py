"""The README's Layout section comes from the tree (scripts/readme_layout.py): a tier or package added,
removed or re-described without `python scripts/readme_layout.py --write` fails here."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_layout_is_the_trees() -> None:
    spec = importlib.util.spec_from_file_location("readme_layout", ROOT / "scripts" / "readme_layout.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.layout() in (ROOT / "README.md").read_text(), \
        "README.md's Layout is not the tree's: run python scripts/readme_layout.py --write"
    assert all(f"`{t}/`" in mod.layout() for t in mod.TIERS)
