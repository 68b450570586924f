"""Every face runs a Job on an Executor: the CLI in this process, the window in the job worker process,
a sweep on the local pool. The same Job gives the same JSON on each (timings and the machine aside), and
cancel stops a job on each."""
from __future__ import annotations

import time
from typing import Any

import pytest

from backend_core.orchestration.execute import InProcessExecutor, LocalPoolExecutor, WorkerProcessExecutor, as_completed
from backend_core.orchestration.jobs import Job, LowerRequest

VOLATILE = {"timings_s", "host"}
VOLATILE_LOWER = {"from_cache", "seconds", "cache_note"}


def _comparable(d: dict[str, Any]) -> dict[str, Any]:
    d = {k: v for k, v in d.items() if k not in VOLATILE}
    d["steps"] = dict(d["steps"])
    d["steps"]["lower"] = {k: v for k, v in d["steps"]["lower"].items() if k not in VOLATILE_LOWER}
    d["steps"]["lower"]["stages"] = [{k: v for k, v in s.items() if k != "seconds"}
                                     for s in d["steps"]["lower"]["stages"]]
    return d


def test_same_job_same_json_on_every_executor() -> None:
    job = Job("layernorm_mlp", steps=("lower", "memory"))
    events: list[str] = []
    with InProcessExecutor() as here:
        cli = here.submit(job, lambda kind, data: events.append(kind)).result().to_dict()
    with WorkerProcessExecutor() as worker:
        stages: list[str] = []
        window = worker.submit(job, lambda kind, data: stages.append(data["snapshot"].stage)
                               if kind == "stage" else None).result().to_dict()
    with LocalPoolExecutor(1) as pool:
        sweep = [h.result().to_dict() for h in as_completed(pool.map([job]))][0]
    assert cli["status"] == "done" and cli["exit_code"] == 0
    assert "stage" in events and "step" in events
    assert stages and stages[-1] == "final"          # the worker streamed each stage as a snapshot
    assert _comparable(window) == _comparable(cli)
    assert _comparable(sweep) == _comparable(cli)


def test_cancel_in_process_and_in_a_worker_process() -> None:
    job = Job("mobilenet_v1_025", steps=("lower",), lower=LowerRequest(use_cache=False))
    for executor in (InProcessExecutor(), WorkerProcessExecutor()):
        with executor as ex:
            started: list[str] = []
            handle = ex.submit(job, lambda kind, data, started=started: started.append(kind) if kind == "stage" else None)
            deadline = time.monotonic() + 120
            while not started and time.monotonic() < deadline:
                time.sleep(0.05)
            assert started, f"no stage within 120 s on {ex.describe()}"
            handle.cancel()
            res = handle.result(timeout=120)
        assert res.status == "cancelled" and res.exit_code == 130, (ex.describe(), res.to_dict()["error"])


def test_numerics_channels_last_from_the_cli(tmp_path, capsys) -> None:
    """`cmlens numerics --channels-last` lowers the converted model: an NCHW conv that is a layout
    fallback as given runs on CMSIS-NN, and its layer is compared."""
    import json

    from app.cli import main

    model = tmp_path / "nchw_conv.py"
    model.write_text("import torch\n"
                     "def get_model():\n"
                     "    torch.manual_seed(0)\n"
                     "    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval()\n"
                     "def get_example_inputs():\n    return (torch.rand(1, 3, 16, 16),)\n")
    targets = {}
    for flag in ([], ["--channels-last"]):
        out = tmp_path / f"n{len(flag)}.json"
        assert main(["numerics", str(model), "--inputs", "1", "--json", str(out), *flag]) == 0, capsys.readouterr().err
        targets[bool(flag)] = {layer["target"] for layer in json.loads(out.read_text())["layers"]}
    assert any("quantized_conv2d" in t for t in targets[True]), targets[True]
    assert not any("quantized_conv2d" in t for t in targets[False]), targets[False]


@pytest.mark.parametrize("bad", [{"steps": ["lower", "fly"]}, {"outputs": {"pdf": "x.pdf"}}])
def test_bad_job_is_a_clear_error_in_the_worker(bad: dict) -> None:
    import json
    import subprocess
    import sys

    from backend_core.common.protocol import JOB_WORKER, parse_line

    p = subprocess.run([sys.executable, "-m", JOB_WORKER], input=json.dumps({"model": "ds_cnn", **bad}),
                       capture_output=True, text=True, timeout=120)
    msgs = [m for m in map(parse_line, p.stdout.splitlines()) if m]
    assert p.returncode == 2 and msgs[-1]["type"] == "error", p.stdout + p.stderr
    assert "Unknown" in msgs[-1]["message"] and msgs[-1]["hint"]
