"""Disk cache of dot layouts, keyed by what made the layout: the exact text given to dot (the view
graph with its labels, sizes, grouping and options: whatever the view-graph code does is in it, no
version to remember to bump), the dot that ran (its path and `dot -V`) and the code that reads dot's
answer back.

dot takes seconds on big graphs; reopening the same snapshot should not. Failures to read or
write the cache only cost time, never correctness.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

LAYOUT_VERSION = "8"      # the cache file's format (8: keyed by the dot text, not the snapshot + a stamp)
_PARSERS = ("dot.py", "result.py", "compute.py")   # turn dot's JSON into the cached boxes and routes


def layout_cache_dir() -> Path:
    from backend_core.stages.cache import cache_root

    return cache_root() / "layout"


@functools.lru_cache(maxsize=None)
def _dot_identity(exe: str) -> str:
    """`dot -V` of this executable, once per process (a Graphviz upgrade can move every box)."""
    try:
        res = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=30, check=False)
        return f"{os.path.realpath(exe)}|{(res.stderr or res.stdout).strip()}"
    except (OSError, subprocess.TimeoutExpired):
        return exe


@functools.lru_cache(maxsize=None)
def _parser_hash() -> str:
    here = Path(__file__).resolve().parent
    return hashlib.sha1(b"".join((here / f).read_bytes() for f in _PARSERS)).hexdigest()


def layout_key(dot_src: str, dot_exe: str) -> str:
    blob = "|".join((LAYOUT_VERSION, _dot_identity(dot_exe), _parser_hash(), dot_src))
    return hashlib.sha1(blob.encode()).hexdigest()


def load_cached(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def store_cached(path: Path, data: dict) -> None:
    try:
        from backend_core.common.files import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(data))
    except OSError:
        pass                                  # a cache that cannot be written is only slower
