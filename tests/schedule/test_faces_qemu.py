"""Opt-in (CMLENS_TEST_ET_ROOT): `cmlens run MODEL --schedule FILE` builds the scheduled program and
PASSes bit for bit against the UNSCHEDULED program's outputs on QEMU (mobilenet_v1_025, int8 input, 4×4
patches after the second depthwise conv, on M55, M7, M4 and M33); a schedule for another lowering is exit 2
before any build with nothing written; `cmlens export --schedule FILE --check` ships the scheduled
program with pools from its own plan and PASSes."""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from app.cli import main

pytestmark = pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"),
                                reason="opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
MODEL, SPLIT = "mobilenet_v1_025", "cortex_m_quantized_depthwise_conv2d_default_1"


def _checkout() -> list[str]:
    argv = ["--et-root", os.environ["CMLENS_TEST_ET_ROOT"]]
    return argv + (["--cmsis-nn", os.environ["CMLENS_TEST_CMSIS_NN"]] if os.environ.get("CMLENS_TEST_CMSIS_NN") else [])


def _schedule_for(target: str, folder: Path, grid: tuple[int, int] = (4, 4)) -> Path:
    """A schedule file for this machine's lowering of MODEL for `target` (its program key: the cached
    lowering's .pte, the one `--schedule auto` would have keyed)."""
    pte = folder / f"{target}.pte"
    assert main(["lower", MODEL, "--target", target, "--pte", str(pte)]) == 0
    doc = {"kind": "cmlens-schedule", "schema": 1, "model": MODEL, "target": target,
           "program_key": hashlib.sha256(pte.read_bytes()).hexdigest(), "split": SPLIT, "grid": list(grid),
           "input": {"dtype": "int8"}, "planner": "greedy"}
    path = folder / f"{target}.schedule.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m7", "cortex-m4", "cortex-m33"])
def test_run_the_scheduled_program_passes_bit_for_bit(target: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    sched = _schedule_for(target, tmp_path)
    out_json = tmp_path / "run.json"
    code = main(["run", MODEL, "--target", target, "--schedule", str(sched), "--quiet", "--json", str(out_json),
                 *_checkout()])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "PASS, bit-exact" in out and "the unscheduled lowered program run on the host" in out
    run = json.loads(out_json.read_text())
    assert run["outcome"] == "PASS"
    assert (tmp_path / "run.schedule.json").is_file() and (tmp_path / "run.scheduled.bpte").is_file()
    # the runner planned the scheduled arena, as the schedule says (4x4: M7 52,352 B, against 138,240 unscheduled)
    planned = re.search(r"planned buffer mem_id=1\s+([\d,]+)\s+([\d,]+)\s+ok \(exact\)", out)
    assert planned is not None and planned.group(1) == planned.group(2)
    total = json.loads((tmp_path / "run.schedule.json").read_text())["total_ram_bytes"]
    assert int(planned.group(2).replace(",", "")) == total < 138240


def test_run_refuses_a_schedule_of_another_lowering_before_any_build(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    sched = _schedule_for("cortex-m55", tmp_path)
    assert main(["run", MODEL, "--target", "cortex-m7", "--schedule", str(sched), "--quiet",
                 "--json", str(tmp_path / "r.json"), *_checkout()]) == 2
    captured = capsys.readouterr()
    assert "was made for another program (mobilenet_v1_025 on cortex-m55" in captured.err + captured.out
    assert "runner_build" not in captured.out
    assert not (tmp_path / "r.schedule.json").exists() and not (tmp_path / "r.scheduled.bpte").exists()


def test_export_ships_the_scheduled_program_and_checks_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    sched = _schedule_for("cortex-m55", tmp_path)
    bundle = tmp_path / "bundle"
    code = main(["export", MODEL, "--target", "cortex-m55", "--schedule", str(sched), "-o", str(bundle), "--check",
                 "--quiet", *_checkout()])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    info = json.loads((bundle / "bundle.json").read_text())
    assert info["schedule"]["split"] == SPLIT and info["schedule"]["input_dtype"] == "int8"
    planned = json.loads((bundle / "schedule.json").read_text())
    assert info["pools"]["planned"][0]["bytes"] == info["schedule"]["total_ram_bytes"] < 138240   # ITS plan
    assert info["io"]["inputs"][0]["dtype"] == "int8" and info["io"]["inputs"][0]["quantization"]["scale"] > 0
    assert planned["split"] == SPLIT and planned["grid"] == [4, 4]
    readme = (bundle / "README.md").read_text()
    assert "## Schedule" in readme and "cmlens_model_quantize_input" in readme
    assert info["check"]["verdict"] == "PASS" and "check: PASS" in out
