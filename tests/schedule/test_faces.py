"""A schedule is a program, and every face takes it (issue 47, item 4): `cmlens lower --schedule FILE`
writes the schedule beside the report through the job's one writer, the report and the history name it,
`gate --max-arena` gates the scheduled total RAM, `memory --board/--ram` on a model that does not fit
ends with the cheapest schedule that fits, and bad input is exit 2 with nothing written. Each test lowers
the tiny patch_net once or twice (FILE schedules, narrow grids: no full search)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from backend_core.analyses.schedule.rewrite import schedule_program
from backend_core.analyses.schedule.schedule_file import schedule_doc
from tests.schedule.conftest import PATCH_NET

SPLIT = "cortex_m_quantized_conv2d_default_2"


def _schedule_file(low, folder: Path, grid: tuple[int, int] = (2, 3), int8: bool = True,
                   name: str = "patch.schedule.json") -> Path:
    """A schedule file for this lowering of patch_net (its program key), as --schedule auto writes one."""
    r = schedule_program(low.pipeline.final_program, SPLIT, (2, 3), "cortex-m55", int8=int8)
    cand = {"split": SPLIT, "grid": list(grid), "input_quant": r.input_quant.to_dict() if int8 else None,
            "planner": "greedy", "total_ram_bytes": 0, "extra_macs": 0.0, "bit_exact": True}
    path = folder / name
    path.write_text(json.dumps(schedule_doc(PATCH_NET, "cortex-m55", low.blobs["model.pte"], cand)))
    return path


@pytest.fixture(scope="module")
def lowered_pair(patch_net, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """patch_net lowered by `cmlens lower --schedule FILE --json` (int8 input), and the same report
    without its schedule (the plain lowering's: same program, one lowering fewer)."""
    d = tmp_path_factory.mktemp("faces")
    sched = _schedule_file(patch_net, d)
    assert main(["lower", PATCH_NET, "--target", "cortex-m55", "--schedule", str(sched),
                 "--json", str(d / "scheduled.json")]) == 0
    plain = json.loads((d / "scheduled.json").read_text())
    del plain["schedule"], plain["options"]["schedule"]
    (d / "plain.json").write_text(json.dumps(plain))
    return {"dir": d, "file": sched, "plain": d / "plain.json", "scheduled": d / "scheduled.json"}


def test_lower_writes_the_schedule_and_the_scheduled_program_beside_the_report(lowered_pair: dict) -> None:
    d = lowered_pair["dir"]
    doc = json.loads((d / "scheduled.schedule.json").read_text())
    assert doc["kind"] == "cmlens-schedule" and doc["split"] == SPLIT and doc["input"]["dtype"] == "int8"
    bpte = d / "scheduled.scheduled.bpte"
    assert bpte.read_bytes()[4:6] == b"BP"                         # a bundle: the run judges it
    refs = json.loads((d / "scheduled.scheduled.references.json").read_text())
    assert refs["expected_from"] == "lowered program (host)" and "unscheduled" in refs["notes"][0]
    report = json.loads(lowered_pair["scheduled"].read_text())
    assert report["options"]["schedule"] == "file:patch.schedule.json"      # the file says its input dtype
    chosen = report["schedule"]["chosen"]
    assert chosen["bit_exact"] and chosen["total_ram_bytes"] < report["schedule"]["plain"]["total_ram_bytes"]


def test_the_history_configuration_names_the_schedule(lowered_pair: dict) -> None:
    from backend_core.orchestration.history.config import config_of_report, config_of_request
    from backend_core.orchestration.history.metrics import metrics_of
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.outputs import schedule_options_of
    from backend_core.orchestration.jobs.spec import ScheduleOptions

    plain = json.loads(lowered_pair["plain"].read_text())
    scheduled = json.loads(lowered_pair["scheduled"].read_text())
    a, b = config_of_report(plain), config_of_report(scheduled)
    assert a != b and b == a + " schedule=file:patch.schedule.json"
    job = Job(PATCH_NET, LowerRequest(), steps=("schedule",), schedule=ScheduleOptions("auto", "int8"))
    assert config_of_request(job.lower, schedule=schedule_options_of(job)).endswith("schedule=auto input=int8")
    m, _ = metrics_of(scheduled, None)
    assert m["schedule_total_ram_bytes"] == scheduled["schedule"]["chosen"]["total_ram_bytes"]


def test_gate_max_arena_gates_the_scheduled_total_ram(lowered_pair: dict, capsys: pytest.CaptureFixture) -> None:
    d = lowered_pair["dir"]
    base = d / "plain.baseline.json"
    assert main(["gate", str(lowered_pair["plain"]), "--write-baseline", str(base)]) == 0
    capsys.readouterr()
    assert main(["gate", str(lowered_pair["scheduled"]), "--baseline", str(base), "--max-arena", "+0%"]) == 0
    out = capsys.readouterr().out
    total = json.loads(lowered_pair["scheduled"].read_text())["schedule"]["chosen"]["total_ram_bytes"]
    assert "total RAM of the program (scheduled" in out and f"{total:,}" in out
    sched_base = d / "scheduled.baseline.json"
    assert main(["gate", str(lowered_pair["scheduled"]), "--write-baseline", str(sched_base)]) == 0
    capsys.readouterr()
    assert main(["gate", str(lowered_pair["plain"]), "--baseline", str(sched_base), "--max-arena", "+0%"]) == 1


def test_bad_schedules_exit_2_and_write_nothing(patch_net, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A grid larger than the split tensor (a schedule for another program: tests/schedule/test_cli.py)."""
    big = _schedule_file(patch_net, tmp_path, grid=(40, 40), name="big.schedule.json")
    assert main(["lower", PATCH_NET, "--target", "cortex-m55", "--schedule", str(big),
                 "--json", str(tmp_path / "r.json"), "--pte", str(tmp_path / "r.pte")]) == 2
    err = capsys.readouterr().err
    assert "A 40×40 patch grid does not fit" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.schedule.json"]   # no report, .pte, schedule
    assert main(["lower", PATCH_NET, "--schedule", "fit"]) == 2
    assert "--schedule fit without a board" in capsys.readouterr().err


def test_memory_on_a_board_it_does_not_fit_ends_with_the_schedule_that_fits(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """patch_net's firmware on M55 (table runtime) with 2 KiB less RAM than it needs: no schedule with its
    float input fits (its float input buffer is the peak), short by a positive amount; with an int8 input
    one does, and the command says which and what it costs."""
    argv = ["memory", PATCH_NET, "--target", "cortex-m55", "--runtime-from", "table", "--flash", "2M",
            "--json", str(tmp_path / "m.json")]
    assert main([*argv, "--ram", "1M"]) == 0
    need = sum(n["bytes"] for n in json.loads((tmp_path / "m.json").read_text())["memory"]["verdict"]["needs"]
               if n["kind"] == "ram")
    capsys.readouterr()
    assert main([*argv, "--ram", str(need - 2048)]) == 1
    out = capsys.readouterr().out
    assert "verdict: DOES NOT FIT" in out and "make it fit: searching" in out and "by -" not in out
    assert "float32 input: no patch schedule fits:" in out and "short of RAM by 2.0 KiB" in out
    assert "int8 input: fits with a schedule:" in out and f"use it: cmlens run/export {PATCH_NET}" in out
    assert json.loads((tmp_path / "m.schedule.json").read_text())["input"]["dtype"] == "int8"
    fit = json.loads((tmp_path / "m.json").read_text())["fit_schedule"]
    assert fit["fits"] and fit["input_dtype"] == "int8" and fit["verdict"]["ram_fits"]


def test_every_face_takes_the_schedule_flags() -> None:
    from app.cli import build_parser

    subs = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name in ("lower", "run", "memory", "export"):
        flags = {f for a in subs[name]._actions for f in a.option_strings}
        assert {"--schedule", "--input-dtype"} <= flags, name


def test_a_sweep_varies_the_schedule(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.jobs import LowerRequest
    from backend_core.orchestration.sweep import build_jobs, parse_vary

    axes = parse_vary(["schedule=none,auto+int8,fit:stm32f746", "target=m4,m55"])
    assert axes["schedule"] == ["none", "auto+int8", "fit:stm32f746"]
    jobs = build_jobs(["ds_cnn"], axes, ("lower", "memory"), LowerRequest())
    assert len(jobs) == 6 and len({j.key() for j in jobs}) == 6
    plain, auto = jobs[0], jobs[2]
    assert not plain.wants("schedule") and "no schedule" in plain.label
    assert auto.wants("schedule") and (auto.schedule.spec, auto.schedule.input_dtype) == ("auto", "int8")
    assert auto.schedule.output is None and "schedule auto+int8" in auto.label
    for bad, text in (("schedule=auto+int16", "is not int8"), ("schedule=none+int8", "a schedule option"),
                      (f"schedule={tmp_path / 'no.json'}", "no such file")):
        with pytest.raises(BadInputError, match=text):
            parse_vary([bad])
    assert main(["sweep", "ds_cnn", "--vary", "schedule=fit:stm32f999", "--out", str(tmp_path / "s")]) == 2
    assert "Unknown board 'stm32f999'" in capsys.readouterr().err and not (tmp_path / "s").exists()
