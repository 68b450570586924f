"""The interactive HTML report: one self-contained file (no server, no network) with the graph of every
stage, a node inspector (reason, evidence, fix, qparams, memory, cost) and, for `cmlens compare --html`,
the N-way compare with synced selection and deltas on the nodes.

Graphs are laid out here in Python (Graphviz, backend_core.analyses.graph_layout) and embedded as coordinates, so the
browser only draws SVG. The viewer's JS/CSS live in resources/report/ and are inlined.

    interactive_html(report) -> str                 # `cmlens lower --html`
    compare_html(compare_dict, lowerings) -> str    # `cmlens compare --html`
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.analyses.report.interactive.bundle import lowering_bundle
from backend_core.analyses.report.interactive.compare import compare_html, compare_view
from backend_core.analyses.report.interactive.page import page


def interactive_html(report: dict[str, Any]) -> str:
    """One lowering report (docs/json-format.md, with graphs) as the interactive page."""
    from backend_core.analyses.report.interactive.summary import details_html, fallbacks_html, head_html, title_of

    data = {"lowerings": [lowering_bundle(report)], "compare": None}
    return page(title=title_of(report), top=head_html(report) + "\n" + fallbacks_html(report),
                details=details_html(report), data=data)


def write_text(path: str | Path, text: str) -> str:
    """Written whole or not at all, into a folder that exists (backend_core.common.files)."""
    from backend_core.common.files import write_atomic

    return write_atomic(Path(path).expanduser(), text)


__all__ = ["compare_html", "compare_view", "interactive_html", "lowering_bundle", "write_text"]
