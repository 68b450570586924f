"""On-disk cache of lowering results, keyed by model source + options + stack versions, so
lowering the same model again returns in about a second."""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from .versions import stack_versions

FORMAT_VERSION = "4"


def cache_root() -> Path:
    root = os.environ.get("CMLENS_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cmlens"


# Modules that do not shape a lowering result: editing them must not invalidate the cache.
_NOT_IN_RESULTS = {"target", "numerics", "layout.py", "worker.py", "report/html_report.py",
                   "report/dot_export.py", "cache.py", "memory"}


def code_fingerprint() -> str:
    """Hash of this package's sources: a change to the analysis invalidates cached results."""
    h = hashlib.sha1()
    pkg = Path(__file__).resolve().parent
    for f in sorted(pkg.rglob("*.py")):
        rel = f.relative_to(pkg).parts
        if rel[0] in _NOT_IN_RESULTS or "/".join(rel) in _NOT_IN_RESULTS:
            continue
        h.update(f.read_bytes())
    return h.hexdigest()


def cache_key(fingerprint: str, options_key: str) -> str:
    blob = json.dumps([FORMAT_VERSION, fingerprint, options_key, stack_versions(), code_fingerprint()],
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class ResultCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_root()) / "lower"

    def _dir(self, key: str) -> Path:
        return self.root / key

    def load(self, key: str) -> tuple[dict[str, Any], dict[str, bytes]] | None:
        d = self._dir(key)
        f = d / "result.pickle"
        if not f.is_file():
            return None
        try:
            data = pickle.loads(f.read_bytes())
        except Exception:  # noqa: BLE001 - a stale or truncated cache entry is a miss, not an error
            return None
        blobs = {p.name: p.read_bytes() for p in d.iterdir() if p.suffix in (".pte", ".bpte")}
        return data, blobs

    def store(self, key: str, data: dict[str, Any], blobs: dict[str, bytes]) -> None:
        d = self._dir(key)
        d.mkdir(parents=True, exist_ok=True)
        for name, b in blobs.items():
            (d / name).write_bytes(b)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            # The frozen snapshot dataclasses pickled as they are: building and encoding the JSON
            # report for every lowering cost MobileNetV2 ~1 s (the report is made on demand).
            # The cache is this user's own directory, written only by this code.
            pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, d / "result.pickle")   # atomic: a crash never leaves half a result
