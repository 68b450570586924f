"""The same sweep on Dask: a real `dask scheduler` with two `dask worker` processes on 127.0.0.1 driven
through `cmlens sweep --scheduler`. Same rows as the local pool (once: a LocalCluster test proved the
same thing a second time)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend_core.orchestration.execute import DaskExecutor, LocalPoolExecutor
from backend_core.orchestration.sweep import build_jobs, parse_vary, run_sweep

from .conftest import rows

BIN = Path(sys.executable).parent


def _jobs(models: Path):
    return build_jobs([str(models / "mlp.py"), str(models / "mlp_layernorm.py")], parse_vary(["target=m4,m55"]),
                      ("lower", "memory"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cli_cluster(tmp_path: Path):
    """`dask scheduler` + `dask worker --nworkers 2` as a user starts them, with Dask's default settings
    (cmlens itself sets the scheduler to retry a job whose worker died once)."""
    port = _free_port()
    env = dict(os.environ)
    addr = f"tcp://127.0.0.1:{port}"
    log = (tmp_path / "dask.log").open("w")
    sched = subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                              "--no-dashboard"], env=env, stdout=log, stderr=subprocess.STDOUT)
    workers = subprocess.Popen([str(BIN / "dask"), "worker", addr, "--nthreads", "1", "--nworkers", "2",
                                "--no-dashboard", "--host", "127.0.0.1"], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        from distributed import Client

        deadline = time.monotonic() + 120
        with Client(addr, timeout="60s") as c:
            while len(c.scheduler_info()["workers"]) < 2:
                assert time.monotonic() < deadline, (tmp_path / "dask.log").read_text()[-2000:]
                time.sleep(0.5)
        yield addr
    finally:
        for p in (workers, sched):
            p.terminate()
        for p in (workers, sched):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()


def test_cli_sweep_on_a_scheduler_with_two_workers(dask_cli_cluster: str, models: Path, tmp_path: Path) -> None:
    """Same rows as the local pool; a worker killed mid-job (dies_once) is retried, one that always
    dies becomes a failed row; nothing is lost."""
    import json

    from app.cli import main

    ex = DaskExecutor(dask_cli_cluster)          # each worker checks itself and says so (before the sweep:
    try:                                         # dies_always kills workers, and the nanny restarts them)
        workers = ex.check_workers(["lower"], None)
        assert len(workers) == 2 and all(not w["problems"] for w in workers), workers
        assert "Dask cluster" in ex.describe() and ex.workers == 2
    finally:
        ex.close()
    code = main(["sweep", str(models / "mlp.py"), str(models / "mlp_layernorm.py"), str(models / "dies_once.py"),
                 str(models / "dies_always.py"), "--vary", "target=m4,m55", "--steps", "lower,memory",
                 "--scheduler", dask_cli_cluster, "--out", str(tmp_path / "out")])
    res = {}
    for p in (tmp_path / "out" / "results").glob("*.json"):
        r = json.loads(p.read_text())
        res[r["job"]["label"]] = r
    assert len(res) == 8 and code == 1

    assert res["dies_once · m4"]["status"] == "done" or res["dies_once · m55"]["status"] == "done"
    assert {res[f"dies_always · {c}"]["error"]["type"] for c in ("m4", "m55")} == {"WorkerDied"}
    local = run_sweep(_jobs(models), tmp_path / "pool", LocalPoolExecutor(2))
    assert {k: v for k, v in rows({k: v for k, v in res.items() if k.startswith("mlp")}).items()} == rows(local.results)
