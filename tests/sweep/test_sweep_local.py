"""`cmlens sweep` on the default executor, a local process pool: rows, resume, a killed worker, bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from backend_core.orchestration.execute import LocalPoolExecutor
from backend_core.orchestration.sweep import build_jobs, parse_vary, run_sweep

from .conftest import rows


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    """mlp and mlp+LayerNorm on M4 and M55, lower + memory, on a 2-process pool."""
    import shutil

    from .conftest import MODELS

    d = tmp_path_factory.mktemp("sweep")
    shutil.copy(MODELS / "mlp.py", d / "mlp.py")
    shutil.copy(MODELS / "mlp_layernorm.py", d / "mlp_layernorm.py")
    jobs = build_jobs([str(d / "mlp.py"), str(d / "mlp_layernorm.py")], parse_vary(["target=m4,m55"]),
                      ("lower", "memory"))
    lines: list[str] = []
    out = run_sweep(jobs, d / "out", LocalPoolExecutor(2), on_progress=lambda p, t: lines.append(t))
    return d, jobs, out, lines


def test_local_pool_gives_one_row_per_model_and_cpu(local_sweep) -> None:
    d, jobs, out, lines = local_sweep
    got = rows(out.results)
    assert set(got) == {"mlp · m4", "mlp · m55", "mlp_layernorm · m4", "mlp_layernorm · m55"}
    assert all(status == "done" for status, *_ in got.values())
    assert got["mlp · m4"][1] == 0 and got["mlp_layernorm · m4"][1] >= 1       # the LayerNorm falls back
    assert all(arena is not None and pte > 0 for _, _, arena, pte, _ in got.values())
    assert any("ETA" in t or "4/4" in t for t in lines) and "finished" in lines[-1]
    assert out.exit_code == 0
    dash = (d / "out" / "dashboard.html").read_text()
    assert "mlp_layernorm · m55" in dash and "http://" not in dash and "https://" not in dash
    for jid, res in out.results.items():       # every finished cell has its report and a gate baseline
        assert (d / "out" / "reports" / f"{jid}.html").is_file()
        base = json.loads((d / "out" / "baselines" / f"{jid}.json").read_text())
        assert base["format"] == "cmlens-baseline" and base["target"] == res["job"]["lower"]["target"]


def test_rerun_of_a_finished_sweep_does_no_work(local_sweep) -> None:
    d, jobs, first, _ = local_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (d / "out" / "results").glob("*.json")}

    class NoWork(LocalPoolExecutor):
        def run_batch(self, items, on_done, on_start, cancel):
            raise AssertionError(f"a finished sweep ran {len(items)} job(s) again")

    again = run_sweep(jobs, d / "out", NoWork(2))
    assert again.progress.skipped == 4 and rows(again.results) == rows(first.results)
    assert before == {p.name: p.stat().st_mtime_ns for p in (d / "out" / "results").glob("*.json")}


def test_a_killed_worker_is_retried_once_and_every_row_stays(models: Path, tmp_path: Path) -> None:
    jobs = build_jobs([str(models / "dies_once.py"), str(models / "dies_always.py"), str(models / "mlp.py")],
                      {}, ("lower",))
    out = run_sweep(jobs, tmp_path / "out", LocalPoolExecutor(2))
    by = {r["job"]["label"]: r for r in out.results.values()}
    assert set(by) == {"dies_once", "dies_always", "mlp"}
    assert by["dies_once"]["status"] == "done"                   # its second attempt ran on a new worker
    assert by["mlp"]["status"] == "done"
    assert by["dies_always"]["status"] == "failed" and by["dies_always"]["error"]["type"] == "WorkerDied"
    assert "died twice" in by["dies_always"]["error"]["message"]
    assert out.exit_code == 1
    assert len(list((tmp_path / "out" / "results").glob("*.json"))) == 3


@pytest.mark.parametrize("argv, words", [
    (["--vary", "colour=red"], ["unknown axis 'colour'", "Axes: target"]),
    (["--vary", "target=m4,m99"], ["m99"]),
    (["--vary", "target"], ["has no '='"]),
    (["--steps", "lower,bake"], ["Unknown step(s) bake"]),
])
def test_bad_axes_and_steps_exit_2_before_anything_runs(argv, words, tmp_path, capsys) -> None:
    code = main(["sweep", "ds_cnn", "--out", str(tmp_path / "out"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and all(w in err for w in words), err
    assert not (tmp_path / "out").exists()


def test_unknown_model_exits_2(tmp_path, capsys) -> None:
    code = main(["sweep", "no_such_model", "--out", str(tmp_path / "out")])
    assert code == 2 and "no_such_model" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_unreachable_scheduler_exits_2_with_its_address_and_the_command(tmp_path, capsys) -> None:
    code = main(["sweep", "ds_cnn", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "tcp://127.0.0.1:1" in err and "dask scheduler" in err
