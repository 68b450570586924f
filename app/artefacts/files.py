"""Which files the window opens and how an artefact request is formed: the Open dialog's filter, the
paths a drag carries, and the companion files an ETDump or an ETRecord is opened with.

Qt-light on purpose (only QMimeData / QUrl are read), so the shell and the model bar share it and tests
call it without a window."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.stages.models.sniff import SUFFIXES, is_artefact_path

MODEL_SUFFIXES = (".py", ".pt2")
OPENABLE = MODEL_SUFFIXES + tuple(SUFFIXES)


def is_openable(path: str) -> bool:
    return Path(path).suffix.lower() in OPENABLE or is_artefact_path(path)


def dropped_paths(mime: Any) -> list[str]:
    """Local files of a drag that the window can open, in the order they were dragged."""
    if mime is None or not mime.hasUrls():
        return []
    out = []
    for url in mime.urls():
        if url.isLocalFile():
            p = url.toLocalFile()
            if Path(p).is_file() and (is_openable(p) or Path(p).suffix == ".bin"):
                out.append(p)
    return out


def artefact_request(paths: list[str], current_source: str | None = None) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """(source, companions) for opening `paths` together, or None when they hold no artefact.

    An ETRecord is the source when there is one (the ETDump, the program and a debug buffer go with it);
    an ETDump alone is laid over the ETRecord that is open now, if one is."""
    by_suffix: dict[str, str] = {}
    for p in paths:
        suffix = Path(p).suffix.lower()
        if Path(p).name == "debug_buffer.bin" or suffix == ".debug":
            by_suffix.setdefault("debug_buffer", p)
        elif suffix in SUFFIXES:
            by_suffix.setdefault(SUFFIXES[suffix], p)
    if not by_suffix:
        return None
    if "etrecord" not in by_suffix and "etdump" in by_suffix and current_source and \
            Path(current_source).suffix.lower() == ".etrecord":
        by_suffix["etrecord"] = current_source
    for main in ("etrecord", "pte", "bpte", "etdump"):
        if main in by_suffix:
            source = by_suffix.pop(main)
            break
    else:
        return None
    if "pte" in by_suffix or "bpte" in by_suffix:
        by_suffix["program"] = by_suffix.pop("pte", "") or by_suffix.pop("bpte")
    by_suffix.pop("pte", None)
    by_suffix.pop("bpte", None)
    return source, tuple(sorted(by_suffix.items()))
