"""The lowering cache holds data, never code (issue 37): on a cache shared between users (a team's CI
volume) an entry is JSON checked on load. A pickle planted in an entry is never loaded (it would run code),
and a bad entry is a miss that is computed again, with the result a user expects."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from app.cli import main
from backend_core.stages.cache import PAYLOAD_FILE, ResultCache


class _Planted:
    """Unpickling this creates a file: the proof that loading ran the planter's code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _entry(root: Path) -> Path:
    (entry,) = [d for d in (root / "lower").iterdir() if d.is_dir()]
    return entry


def test_a_planted_pickle_is_never_loaded_and_a_bad_entry_is_recomputed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("CMLENS_CACHE", str(tmp_path / "cache"))
    assert main(["lower", "layernorm_mlp"]) == 0
    first = capsys.readouterr().out
    entry = _entry(tmp_path / "cache")
    assert (entry / PAYLOAD_FILE).is_file() and not list(entry.glob("*.pickle"))

    marker = tmp_path / "pwned"
    (entry / "result.pickle").write_bytes(pickle.dumps(_Planted(str(marker))))   # what an old cmlens read
    assert main(["lower", "layernorm_mlp"]) == 0
    assert "(from cache)" in capsys.readouterr().out          # the JSON entry answered
    assert not marker.exists()

    (entry / PAYLOAD_FILE).write_bytes(pickle.dumps(_Planted(str(marker))))      # a payload that is not JSON
    found = ResultCache().lookup(entry.name)
    assert found.entry is None and "not valid" in found.reason
    assert main(["lower", "layernorm_mlp"]) == 0
    out, err = capsys.readouterr()
    assert "not from the cache: the cached entry is not valid" in err and "(from cache)" not in out
    assert not marker.exists()
    assert out.split("\n", 3)[2:] == first.split("\n", 3)[2:] or "fallback" in out      # the same lowering again
    assert ResultCache().lookup(entry.name).entry is not None                      # stored again, as JSON
    assert os.path.getsize(entry / PAYLOAD_FILE) > 1000
