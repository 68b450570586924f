"""The profile of a real run: layernorm_mlp on QEMU mps3-an547 (Cortex-M55) with -icount shift=5, the
stock ExecuTorch runner on this project's board layer (et_pal_current_ticks = instructions executed),
its UART recorded as text (fixtures/uart_profile_layernorm_mlp_mps3-an547.txt) with the final snapshot
of the same lowering (fixtures/layernorm_mlp_m55.final.json). Two runs of it gave the same counts."""
from __future__ import annotations

import argparse
import io
import json

import pytest

from backend_core.target.profile import build_profile, parse_etdump, qemu_icount
from backend_core.target.profile.run import over_budget
from backend_core.common.snapshot.model import snapshot_from_dict
from backend_core.target.simulate.uart import parse_uart
from profile_support import FIXTURES
from backend_core.target.judge.outcome import uart_outcome

UART = FIXTURES / "uart_profile_layernorm_mlp_mps3-an547.txt"
FINAL = FIXTURES / "layernorm_mlp_m55.final.json"
TOTAL = 38_956          # Method::execute of that run (and of the second run), instructions


@pytest.fixture(scope="module")
def recorded():
    pytest.importorskip("executorch")
    report = parse_uart(UART.read_text())
    assert uart_outcome(report) == "PASS"
    final = snapshot_from_dict(json.loads(FINAL.read_text()))
    events = parse_etdump(report.etdumps[0].files["etdump.bin"])
    return report, final, build_profile(events, final, qemu_icount(5, 32e6), model="layernorm_mlp",
                                        target="cortex-m55")


def test_counts_are_real_and_add_up(recorded) -> None:
    _, final, p = recorded
    assert p.total == TOTAL and p.inference_totals == [TOTAL]
    assert len(p.ops) == 8 and not p.unmapped and all(o.node for o in p.ops)
    assert all(o.count > 0 and o.call_count > o.count for o in p.ops)
    # the kernels + the dispatch loop and event recording = Method::execute, nothing lost
    assert sum(o.count for o in p.ops) + p.overhead == p.total
    # recording an ETDump event costs about the same every time (here ~2,100 instructions)
    diffs = [o.call_count - o.count for o in p.ops]
    assert 1000 < p.recording_per_event < 5000 and max(diffs) - min(diffs) < 0.25 * p.recording_per_event
    # both linears run the same kernel: the 16->32 one has 4x the MACs of the 32->4 one, and costs more
    fc1, fc2 = (o for o in p.ops if "quantized_linear" in o.op)
    assert (fc1.macs, fc2.macs) == (512, 128) and fc1.count > fc2.count


def test_layernorm_island_costs_more_than_the_linears_around_it(recorded) -> None:
    _, _, p = recorded
    ln = next(i for i in p.islands if "native_layer_norm" in i.name)
    assert ln.fallbacks == ["aten_native_layer_norm_default"] and len(ln.nodes) == 4
    assert ln.count == sum(o.count for o in p.ops if o.node in ln.nodes)
    assert ln.ratio is not None and ln.ratio > 1.0                  # measured 1.5x
    assert ln.share > 0.3                                           # measured 41 % of the kernels


def _fake_args(**kw) -> argparse.Namespace:
    base = dict(model="layernorm_mlp", sim="qemu", target="cortex-m55", et_root="/nonexistent", cmsis_nn=None,
                timeout=60.0, flow="legacy", semihosting=False, etdump=False, atol=0.01, rtol=0.01,
                cache_dir=None, quiet=True, gap_metric="MSE", json=None, json_file_alias=None, protocol=False,
                profile=False, max_instructions=None)
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.mark.parametrize("budget, code", [(TOTAL, 0), (TOTAL - 1, 1)])
def test_budget_exit_code_on_the_recorded_run(recorded, monkeypatch, tmp_path, budget, code) -> None:
    """`cmlens run --max-instructions N` on the recorded run's result (run_model replaced by that
    result: CI has no ExecuTorch sources to build the runner)."""
    import importlib

    from app.cli.run import cmd_run

    rm = importlib.import_module("backend_core.target.judge.run_result")
    # the job's run step, without a checkout or lowering
    jr = importlib.import_module("backend_core.orchestration.jobs.execute_job")
    monkeypatch.setattr(jr, "_check_run_environment", lambda job, emit: None)
    monkeypatch.setitem(jr._STEPS, "lower", lambda *a: None)

    report, final, prof = recorded
    seen = {}

    def fake_run_model(source, *, options, **_):
        seen["options"] = options
        from backend_core.common.boards.table import board_for
        from backend_core.target.build.ops import OpCheck
        from backend_core.target.simulate.simulator import SimResult

        board = board_for("cortex-m55")
        sim = SimResult(board, ["qemu-system-arm", "-icount", "shift=5"], 0, 0.7, 60.0, False, report,
                        UART.read_text().splitlines())
        return rm.ModelRunResult("layernorm_mlp", "cortex-m55", board, "PASS", 0, OpCheck([]), sim,
                                 tmp_path / "x.elf", profile=prof)

    monkeypatch.setattr(importlib.import_module("backend_core.orchestration.jobs.target_run.run_on_target"), "run_on_target",
                        fake_run_model)
    out, err = io.StringIO(), io.StringIO()
    jf = tmp_path / "r.json"
    assert cmd_run(_fake_args(max_instructions=budget, json=str(jf)), out, err) == code
    assert seen["options"].profile is True                          # the budget turns profiling (-icount) on
    text = out.getvalue()
    assert ("EXCEEDED" in text) == (code == 1) and f"instruction budget {budget:,}" in text
    d = json.loads(jf.read_text())
    assert d["budget"]["exceeded"] == (code == 1) and d["profile"]["total"] == TOTAL
    assert d["profile"]["unit"] == "instructions" and d["exit_code_cli"] == code
    assert over_budget(prof, budget) == ("" if code == 0 else d["budget"]["message"])
