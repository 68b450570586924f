"""Graphviz DOT text for a snapshot (fallbacks red, kernels green...) and SVG rendering via the
`dot` binary (argument list, never a shell)."""
from __future__ import annotations

import shutil
import subprocess

import resources

from backend_core.common.snapshot.model import ALL_KINDS, KIND_FALLBACK, KIND_WEIGHT, GraphSnapshot

# The graph fills of the node kinds (resources/colors.json, shared with the GUI).
KIND_COLORS = {k: resources.node_kind_colors()[k]["dot_fill"] for k in ALL_KINDS}
FALLBACK_OUTLINE = resources.colors()["fallback_outline"]
EDGE_COLOR = resources.colors()["overlay"]["edge"]


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def snapshot_to_dot(snap: GraphSnapshot, *, hide_weights: bool = True) -> str:
    hidden = {n.id for n in snap.nodes if hide_weights and n.kind == KIND_WEIGHT}
    lines = ["digraph G {", "rankdir=TB;", 'node [shape=box style="rounded,filled" fontname="Helvetica" fontsize=10];',
             'edge [fontname="Helvetica" fontsize=8 color="' + EDGE_COLOR + '"];']
    for n in snap.nodes:
        if n.id in hidden:
            continue
        op = n.target.split(".")[-2] if n.target.count(".") >= 2 else n.target
        label = f"{op}\n{n.name}"
        if n.shape:
            label += f"\n{n.dtype} {list(n.shape)}"
        color = KIND_COLORS.get(n.kind, "#ffffff")
        extra = f' penwidth=3 color="{FALLBACK_OUTLINE}" fontcolor="white"' if n.kind == KIND_FALLBACK else ""
        tip = n.fallback.message if n.fallback else f"{n.target} ({n.kind})"
        lines.append(f'"{_esc(n.id)}" [label="{_esc(label)}" fillcolor="{color}" tooltip="{_esc(tip)}"{extra}];')
    for e in snap.edges:
        if e.src in hidden or e.dst in hidden:
            continue
        lab = f"{e.dtype or ''}"
        if e.qparams is not None and not e.qparams.per_channel and (e.dtype or "").startswith("int"):
            lab += f" s={e.qparams.scale:.3g} zp={e.qparams.zero_point}"
        lines.append(f'"{_esc(e.src)}" -> "{_esc(e.dst)}" [label="{_esc(lab)}"];')
    lines.append("}")
    return "\n".join(lines)


def dot_binary() -> str | None:
    return shutil.which("dot")


def render_svg(dot_text: str, timeout: float = 60.0) -> str:
    """SVG text; raises RuntimeError naming the fix when Graphviz is missing or fails."""
    exe = dot_binary()
    if exe is None:
        raise RuntimeError("Graphviz 'dot' is not installed: run `apt-get install -y graphviz`.")
    proc = subprocess.run([exe, "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"dot failed: {proc.stderr.decode(errors='replace')[:300]}")
    svg = proc.stdout.decode(errors="replace")
    return svg[svg.find("<svg"):] if "<svg" in svg else svg
