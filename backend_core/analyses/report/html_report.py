"""The standalone HTML report (no server, no network): the static summary on top (fallbacks with
their reasons, pre-flight, memory, stages) for people who only read, and the interactive viewer
(report/interactive: every stage's graph, a node inspector) under it. One file, JS and CSS inline."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.analyses.report.interactive import interactive_html
from backend_core.analyses.report.interactive.summary import static_page


def render_html(report: dict[str, Any], *, with_graphs: bool = True) -> str:
    """The interactive page; `with_graphs=False` (or a report without nodes): the static summary only."""
    has_nodes = bool(report.get("stages")) and all("nodes" in st for st in report["stages"])
    return interactive_html(report) if with_graphs and has_nodes else static_page(report)


def write_html(report: dict[str, Any], path: str, *, with_graphs: bool = True) -> str:
    """Written whole or not at all, into a folder that exists (backend_core.common.files)."""
    from backend_core.common.files import write_atomic

    return write_atomic(Path(path).expanduser(), render_html(report, with_graphs=with_graphs))
