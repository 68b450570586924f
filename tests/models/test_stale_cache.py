"""Never a stale answer (issue 20), through `cmlens lower` as a user runs it: a model split over two files
and a package lowers; an edited helper is a miss that says so and changes the result (a LayerNorm ->
a fallback); touching a file without changing it keeps the hit; a deleted helper is a clear error."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from app.cli import main
from backend_core.stages.cache import ResultCache, cache_key
from backend_core.stages.models import parse_model_source
from backend_core.stages.pipeline.stages import PipelineOptions
from tests.helpers.split_model import HELPER_WITH_LAYERNORM, write_split_model


def lower(capsys: pytest.CaptureFixture, model: Path) -> tuple[int, str, str]:
    code = main(["lower", str(model)])
    out, err = capsys.readouterr()
    return code, out, err


def test_edit_touch_and_delete_a_helper(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    code, out, _ = lower(capsys, model)
    assert code == 0 and "No fallbacks" in out and "(from cache)" not in out

    later = time.time() + 5                     # touched: a new modification time, the same bytes
    for f in ("helper.py", "model.py", "blocks/head.py", "scale.txt"):
        os.utime(tmp_path / f, (later, later))
    code, out, _ = lower(capsys, model)
    assert code == 0 and "(from cache)" in out and "No fallbacks" in out

    (tmp_path / "helper.py").write_text(HELPER_WITH_LAYERNORM)
    code, out, err = lower(capsys, model)
    assert code == 0
    assert "not from the cache: helper.py changed; lowering again" in err
    assert "(from cache)" not in out and "(not from the cache: helper.py changed)" in out
    assert "native_layer_norm" in out and "No fallbacks" not in out      # the new LayerNorm falls back
    assert "[" + str(tmp_path / "helper.py") + ":" in out                 # on the line the user wrote

    (tmp_path / "helper.py").unlink()
    code, out, err = lower(capsys, model)
    assert code == 2 and "(from cache)" not in out
    assert "helper.py was deleted" in err
    assert "could not import 'helper'" in err and f"{tmp_path} (the model's folder)" in err
    assert "Traceback" not in err


def test_a_data_file_the_model_read_is_checked_too(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """scale.txt is read through __file__ while the model loads: the entry records it; the cache says
    which file changed without lowering anything (the reason is what `cmlens lower` prints)."""
    model = write_split_model(tmp_path)
    assert lower(capsys, model)[0] == 0
    key = cache_key(parse_model_source(str(model)).fingerprint(), PipelineOptions().key())
    cache = ResultCache()
    assert {d.name for d in cache.dependencies(key)} == {"model.py", "helper.py", "blocks/__init__.py",
                                                          "blocks/head.py", "scale.txt"}
    assert cache.lookup(key).entry is not None
    (tmp_path / "scale.txt").write_text("2.0\n")
    found = cache.lookup(key)
    assert found.entry is None and found.reason == "scale.txt changed"
    (tmp_path / "scale.txt").write_text("1.0\n")               # the old bytes again: a hit again
    assert cache.lookup(key).entry is not None
    (tmp_path / "model.py").write_text((tmp_path / "model.py").read_text() + "\n# edited\n")
    assert cache.lookup(key).reason == "model.py changed"


def test_a_sweep_redoes_a_job_whose_model_or_helper_changed(tmp_path: Path) -> None:
    """A sweep folder resumes by job id: an edited model file is a new id, and a stored result whose
    recorded helper changed is not taken as finished (no lowering: the result dict is written here)."""
    from backend_core.orchestration.jobs import Job
    from backend_core.stages.models.dependencies import Dependency, file_digest
    from backend_core.orchestration.sweep.store import SweepStore, job_id

    model = write_split_model(tmp_path / "m")
    helper = model.parent / "helper.py"
    jid = job_id(Job(str(model)))
    store = SweepStore(tmp_path / "sweep")
    dep = Dependency(str(helper), "helper.py", "module", file_digest(helper))
    store.write_result(jid, {"status": "done", "steps": {"lower": {"dependencies": [dep.to_dict()]}}})
    assert store.finished(jid) is not None
    later = time.time() + 5
    os.utime(helper, (later, later))                           # touched: still finished
    assert store.finished(jid) is not None
    helper.write_text(HELPER_WITH_LAYERNORM)
    assert store.finished(jid) is None                         # the helper changed: do it again
    model.write_text(model.read_text() + "\n# edited\n")
    assert job_id(Job(str(model))) != jid
