"""Fixtures every test package may use. GUI packages (tests/gui, tests/firmware_gui, tests/app) turn
`no_leftover_processes` on for each of their tests in their own conftest."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

# The target-flow fixtures (firmware of kernels/ built once per session per board, the toolchain check),
# for the build, boards, doctor and simulate test packages.
from tests.helpers.firmware import build_root, build_timings, firmware, toolchain  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`make test` runs two workers), each worker gets its share of the cores for
    torch's intra-op threads: two workers that each spin up a thread per core oversubscribe the machine."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        threads = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = threads


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One result cache for the whole run, never the developer's: each model is lowered once and every
    test package reads it (GUI tests point CMLENS_CACHE at their own per-session dir). Under xdist the
    workers share it (the run's common temporary folder; entries are written then renamed), so a model
    one worker lowered is a cache hit in the other."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        d = tmp_path_factory.getbasetemp().parent / "cmlens-cache"
        d.mkdir(exist_ok=True)
    else:
        d = tmp_path_factory.mktemp("cmlens-cache")
    old = os.environ.get("CMLENS_CACHE")
    os.environ["CMLENS_CACHE"] = str(d)
    yield d
    if old is None:
        os.environ.pop("CMLENS_CACHE", None)
    else:
        os.environ["CMLENS_CACHE"] = old


@pytest.fixture
def no_leftover_processes(qapp, qtbot) -> Iterator[None]:
    """Fail a test that leaves a background QThread, a job worker process running
    (they are stopped first, so one failure does not cascade)."""
    from tests.helpers.processes import leftovers, stop_all

    yield
    threads, workers = leftovers()
    stop_all(threads, workers)
    if workers:                   # killed processes end within a moment
        qtbot.waitUntil(lambda: not leftovers()[1], timeout=20_000)
    assert not threads, f"{len(threads)} background QThread(s) left running"
    assert not workers, f"{len(workers)} job worker process(es) left running"
