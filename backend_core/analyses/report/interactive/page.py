"""The one self-contained HTML file: static summary on top, then the viewer, then the details; the
data as JSON in a <script type="application/json">, the viewer's JS and CSS inlined from
resources/report/. Nothing is fetched: no server, no network, no CDN."""
from __future__ import annotations

import html
import json
from typing import Any

import resources

from backend_core.analyses.report.interactive.summary import CSS

# colour groups of resources/colors.json the viewer uses (node kinds, diff, overlay)
_COLOR_KEYS = ("node_kinds", "fallback_outline", "diff", "overlay", "ui")


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its <script> early (`</script>`, `<!--` in a reason or a source line): every
    `<` is written \\u003c, which only strings can hold, so it is still the same JSON."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c")


def viewer_assets() -> tuple[str, str]:
    """(css, js) of the viewer, read from the installed resources."""
    return resources.text("report", "viewer.css"), resources.text("report", "viewer.js")


def page(*, title: str, top: str, details: str, data: dict[str, Any],
         extra_json: dict[str, Any] | None = None) -> str:
    """`extra_json`: {element id: data} embedded as more application/json scripts, for tools (the
    compare page carries the compare JSON itself as `cmlens-compare`)."""
    from backend_core.analyses.report.interactive.nodes import kind_labels

    data = dict(data)
    colors = resources.colors()
    data["colors"] = {k: colors[k] for k in _COLOR_KEYS}
    data["kinds"] = kind_labels()
    css, js = viewer_assets()
    return "\n".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title>",
        f"<style>{CSS}\n{css}</style></head><body>",
        top,
        "<p class='skip'><a href='#details'>details below the viewer</a> (pre-flight, memory, stages)</p>",
        "<div id='viewer'><noscript><p class='fb'>The interactive graphs need JavaScript; the tables above "
        "and below need nothing.</p></noscript></div>",
        f"<div id='details'>{details}</div>",
        f"<script type='application/json' id='cmlens-data'>{_json_for_script(data)}</script>",
        *(f"<script type='application/json' id='{html.escape(k)}'>{_json_for_script(v)}</script>"
          for k, v in (extra_json or {}).items()),
        f"<script>{js}</script>",
        "</body></html>"])
