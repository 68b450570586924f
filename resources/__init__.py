"""The product's resources, installed with the package: colours (one file read by the GUI, the HTML
report and the Graphviz export), style sheets, icons and board data. Plain Python, no Qt."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """The file `parts` under resources/ (raises FileNotFoundError naming it when it is missing)."""
    p = ROOT.joinpath(*parts)
    if not p.exists():
        raise FileNotFoundError(f"resource {'/'.join(parts)} is missing from {ROOT} (reinstall: make setup)")
    return p


def text(*parts: str) -> str:
    return path(*parts).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def load_json(*parts: str) -> Any:
    return json.loads(text(*parts))


def colors() -> dict[str, Any]:
    """resources/colors.json: node kinds, diff and overlay colours, UI palette, run outcomes."""
    return load_json("colors.json")


def node_kind_colors() -> dict[str, dict[str, str]]:
    """{kind: {fill, border, text, dot_fill}} for every node kind of backend_core.common.snapshot.model."""
    return colors()["node_kinds"]
