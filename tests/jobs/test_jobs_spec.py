"""A Job is data: it survives JSON (what a process pool or a Dask worker receives) unchanged, and the
steps it runs follow from its model: a ready .pte/.bpte is checked or run as it is, not lowered."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs import Job, LowerRequest, MemoryOptions, RunOptions


def test_a_job_survives_json_with_every_option() -> None:
    job = Job("examples/gelu_conv.py", LowerRequest(target="m4", flow="explicit", activations="int16",
                                                    channels_last=True, calib=8, seed=3, use_cache=False),
              steps=("check", "memory", "run"), board="stm32f746",
              run=RunOptions(etdump=True, qtol=1, method_pool=24_000, cache_root=Path("/tmp/c"), et_root="/src/et"),
              keep=("bpte", "graphs"), out_dir="/tmp/out", label="gelu · m4",
              memory=MemoryOptions(elf="/tmp/runner.elf", runtime_from="table", all_cpus=True))
    again = Job.from_dict(json.loads(json.dumps(job.to_dict())))
    assert again == job and again.key() == job.key()
    assert again.steps == ("lower", "check", "memory", "run")            # it lowers first
    assert again.run_options().board == "stm32f746" and again.run_options().target == "cortex-m4"


@pytest.mark.parametrize("steps, lowers", [(("check",), False), (("run",), False), (("memory",), False),
                                           (("numerics",), True), (("lower", "memory"), True)])
def test_a_ready_program_is_checked_or_run_as_it_is(steps: tuple[str, ...], lowers: bool) -> None:
    assert ("lower" in Job("model.bpte", steps=steps).steps) is lowers


def test_memory_options_make_a_board_of_sizes_and_leave_other_keys_alone() -> None:
    job = Job.from_dict(json.loads(json.dumps(Job("ds_cnn", steps=("memory",),
                                                  memory=MemoryOptions(ram="256K", flash="1M")).to_dict())))
    board = job.memory_board()
    assert sum(r.size for r in board.ram) == 256 * 1024 and sum(r.size for r in board.flash) == 1024 * 1024
    # a job without memory options keeps the key it had (finished sweeps are still found by their ids)
    assert "runtime_from" not in Job("ds_cnn", steps=("memory",)).key()
    with pytest.raises(BadInputError, match="both given"):
        Job("ds_cnn", board="stm32f746", memory=MemoryOptions(ram="256K", flash="1M"))
    with pytest.raises(BadInputError, match="without --ram"):
        Job("ds_cnn", memory=MemoryOptions(flash="1M"))


def test_an_unknown_option_in_a_job_file_names_it() -> None:
    d = Job("ds_cnn").to_dict()
    d["lower"]["colour"] = "red"
    with pytest.raises(BadInputError, match="colour"):
        Job.from_dict(d)


def test_cmlens_check_of_a_bpte_runs_the_check_step_on_it_as_it_is(capsys: pytest.CaptureFixture) -> None:
    """`cmlens check` runs a Job (steps check): a .bpte is read, not lowered (recorded ds_cnn M55 bundle)."""
    from app.cli import main

    bpte = Path(__file__).resolve().parents[1] / "judge" / "fixtures" / "ds_cnn_m55.bpte"
    assert main(["check", str(bpte)]) == 0
    out = capsys.readouterr()
    assert "ds_cnn_m55.bpte → cortex-m55: pre-flight clean" in out.out
    assert "checked: bundled outputs' dim order" in out.out and "importing ExecuTorch" not in out.err
