"""Graphviz: the dot source of a view graph, running `dot -Tjson0`, and parsing its JSON.

Isolated so the only subprocess and the only Graphviz format knowledge live in one place.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable

from backend_core.analyses.graph_layout.grouping import path_prefixes
from backend_core.analyses.graph_layout.result import EdgeRoute
from backend_core.analyses.graph_layout.view_graph import ViewGraph


class LayoutError(RuntimeError):
    """dot is missing or failed; `hint` says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint



def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(vg: ViewGraph) -> str:
    """The dot source. Nodes are fixed-size boxes (the app draws the labels itself)."""
    big = len(vg.items) > 150
    out = ["digraph G {",
           "rankdir=TB; nodesep=0.22; ranksep=0.42; newrank=true; outputorder=edgesfirst;",
           f"{'mclimit=0.3;' if big else ''}",
           'node [shape=box fixedsize=true label="" margin=0];',
           'edge [arrowsize=0.6];']
    # nest clusters by path
    children: dict[str, list[str]] = {"": []}
    for p in sorted(vg.clusters, key=lambda s: (s.count("."), s)):
        parent = ""
        for pre in reversed(path_prefixes(p)[:-1]):
            if pre in vg.clusters:
                parent = pre
                break
        children.setdefault(parent, []).append(p)
        children.setdefault(p, [])
    direct: dict[str, list[str]] = {"": []}
    owner: dict[str, str] = {}
    for c in sorted(vg.clusters, key=lambda s: s.count(".")):
        for i in vg.clusters[c].items:
            owner[i] = c                      # deepest cluster wins (sorted shallow -> deep)
    for i in vg.items:
        direct.setdefault(owner.get(i, ""), []).append(i)

    beside: dict[str, list[str]] = {}
    for i, it in vg.items.items():
        if it.beside and owner.get(i, "") == owner.get(it.beside, ""):
            beside.setdefault(it.beside, []).append(i)

    def emit(c: str, indent: str) -> None:
        for i in direct.get(c, []):
            it = vg.items[i]
            out.append(f"{indent}{_q(i)} [width={it.width / 72:.3f} height={it.height / 72:.3f}];")
            if i in beside:                   # weights and scratch on the row of their user
                out.append(f"{indent}{{rank=same; {_q(i)}; {'; '.join(_q(w) for w in beside[i])};}}")
        for sub in children.get(c, []):
            cid = hashlib.sha1(sub.encode()).hexdigest()[:12]
            out.append(f"{indent}subgraph {_q('cluster_' + cid)} {{")
            out.append(f'{indent}  id={_q(sub)}; label={_q(vg.clusters[sub].label)}; '
                       'fontsize=10; fontname="Helvetica"; margin=10; labeljust=l;')
            emit(sub, indent + "  ")
            out.append(f"{indent}}}")

    emit("", "")
    for e in vg.edges:
        out.append(f"{_q(e.src)} -> {_q(e.dst)};")
    out.append("}")
    return "\n".join(out)


def find_dot() -> str:
    exe = shutil.which("dot") or ("/usr/bin/dot" if Path("/usr/bin/dot").exists() else None)
    if not exe:
        raise LayoutError("Graphviz `dot` was not found.",
                          "Install Graphviz: sudo apt-get install graphviz (or brew install graphviz).")
    return exe


def run_dot(src: str, *, timeout: float = 120.0,
            register: Callable[[subprocess.Popen | None], None] | None = None) -> dict:
    """Run `dot -Tjson0` on `src`; `register(proc)` lets a caller kill it (then None)."""
    proc = subprocess.Popen([find_dot(), "-Tjson0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if register:
        register(proc)
    try:
        out, err = proc.communicate(src, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise LayoutError(f"dot did not finish within {timeout:.0f} s.",
                          "Collapse more module groups.") from None
    finally:
        if register:
            register(None)
    if proc.returncode != 0:
        raise LayoutError(f"dot failed (exit {proc.returncode}): {err.strip()[:500]}")
    return json.loads(out)


def _pt(s: str, h: float) -> tuple[float, float]:
    x, y = s.split(",")[:2]
    return float(x), h - float(y)


def parse_dot_json(data: dict, vg: ViewGraph) -> tuple[dict, dict, list[EdgeRoute], float, float]:
    x0, y0, x1, y1 = (float(v) for v in data["bb"].split(","))
    h = y1
    boxes: dict[str, tuple[float, float, float, float]] = {}
    clusters: dict[str, tuple[float, float, float, float]] = {}
    gvid_name: dict[int, str] = {}
    for o in data.get("objects", []):
        if "nodes" in o or o.get("name", "").startswith("cluster_"):
            if "bb" in o and o.get("id") in vg.clusters:
                a, b, c, d = (float(v) for v in o["bb"].split(","))
                clusters[o["id"]] = (a, h - d, c - a, d - b)
            continue
        name = o["name"]
        gvid_name[o["_gvid"]] = name
        if name in vg.items and "pos" in o:
            cx, cy = _pt(o["pos"], h)
            it = vg.items[name]
            boxes[name] = (cx - it.width / 2, cy - it.height / 2, it.width, it.height)
    routes: list[EdgeRoute] = []
    for e in data.get("edges", []):
        src, dst = gvid_name.get(e["tail"]), gvid_name.get(e["head"])
        if src is None or dst is None or "pos" not in e:
            continue
        arrow = None
        pts: list[tuple[float, float]] = []
        for tok in e["pos"].split():
            if tok.startswith("e,"):
                arrow = _pt(tok[2:], h)
            elif tok.startswith("s,"):
                continue
            else:
                pts.append(_pt(tok, h))
        routes.append(EdgeRoute(src, dst, pts, arrow))
    return boxes, clusters, routes, x1 - x0, y1 - y0
