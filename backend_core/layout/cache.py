"""Disk cache of dot layouts, keyed by the snapshot's content hash and the view options.

dot takes seconds on big graphs; reopening the same snapshot should not. Failures to read or
write the cache only cost time, never correctness.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..snapshot.model import GraphSnapshot
from .view_graph import LayoutOptions

LAYOUT_VERSION = "7"


def layout_cache_dir() -> Path:
    from ..cache import cache_root

    return cache_root() / "layout"


def layout_key(snap: GraphSnapshot, opts: LayoutOptions) -> str:
    blob = f"{LAYOUT_VERSION}|{snap.content_hash()}|{opts.key()}"
    return hashlib.sha1(blob.encode()).hexdigest()


def load_cached(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def store_cached(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass                                  # a cache that cannot be written is only slower
