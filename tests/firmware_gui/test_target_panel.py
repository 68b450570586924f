"""The panel end to end with real child processes: a target run is a Job sent to the job worker
(`python -m backend_core.orchestration.workers.job`, Job JSON on stdin) and shown from its events and `job_result`.
CI has QEMU and the Arm toolchain but no ExecuTorch checkout: runs without one must explain, and the
full run -> result and cancel paths go through a stand-in checkout (tests/firmware_gui/stand_in.py: a
fake `cmake` that installs the libraries and puts a real kernels/ firmware in place of the runner, run
on real QEMU)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.firmware_gui.stand_in import descendants, stand_in_run

from app.lowering.session import lowering_job
from backend_core.orchestration.jobs.spec import LowerRequest

RUN_MS = 180_000


def finished(qtbot, panel, timeout: int = RUN_MS):
    return qtbot.waitSignal(panel.finished, timeout=timeout)


def test_no_checkout_shows_doctor_findings_and_stays_usable(qtbot, panel) -> None:
    panel.set_lowering(lowering_job("ds_cnn", LowerRequest("cortex-m55", "legacy")))
    assert panel.run_btn.isEnabled() and panel.et_root.text() == ""
    with finished(qtbot, panel, 60_000) as blocker:
        panel.run_btn.click()                                   # no checkout: runs the doctor instead
    assert blocker.args[0] == "doctor" and panel.job_slot.job is None          # no job was started
    text = panel.doctor_view.toPlainText()
    assert "No ExecuTorch checkout set" in text
    assert "ExecuTorch" in text and "git clone" in text         # the install command, not a traceback
    assert "Traceback" not in text + panel.console.toPlainText()
    assert panel.tabs.currentWidget() is panel.doctor_view
    assert panel.run_btn.isEnabled() and panel.selftest_btn.isEnabled() and not panel.cancel_btn.isEnabled()


def test_run_submits_a_job_and_a_bad_checkout_reports_exit_2(qtbot, panel, tmp_path: Path) -> None:
    """Run builds a Job from the window's lowering and the form (no command line), the job worker runs
    it, and its job_result says which step failed and why; the doctor follows."""
    from backend_core.common import protocol
    from backend_core.orchestration.jobs import Job

    panel.set_lowering(lowering_job("ds_cnn", LowerRequest("cortex-m4", "legacy", calib="8", channels_last=True)))
    panel.et_root.setText(str(tmp_path / "no-such-executorch"))
    panel.timeout.setValue(33)
    panel.etdump.setChecked(False)
    panel.profile.setChecked(True)
    with finished(qtbot, panel) as blocker:
        panel.run()
        assert panel.job_slot.process_args() == [sys.executable, "-m", protocol.JOB_WORKER]
    assert blocker.args == ["run", 2]
    job = panel.job_slot.job
    assert isinstance(job, Job) and job.model == "ds_cnn" and job.steps == ("lower", "run", "profile")
    assert (job.lower.target, job.lower.flow, job.lower.calib, job.lower.channels_last) == ("cortex-m4", "legacy",
                                                                                           8, True)
    assert (job.run.sim, job.run.timeout, job.run.etdump, job.run.profile) == ("qemu", 33.0, False, True)
    assert job.run.et_root == str(tmp_path / "no-such-executorch")
    res = panel.last_job_result
    assert res["job"] == job.to_dict()                  # the worker ran exactly this Job
    assert res["status"] == "failed" and res["exit_code"] == 2 and res["error"]["step"] == "run"
    assert panel.last_result["exit_code"] == 2
    assert "ERROR (exit 2)" in panel.result_view.outcome.text()
    assert "no-such-executorch" in panel.result_view.details.toPlainText()
    qtbot.waitUntil(lambda: "exit 2" in panel.doctor_view.toPlainText(), timeout=60_000)   # the doctor follows
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=60_000)
    from app.runtime.settings import app_settings     # remembered in QSettings for the next panel
    assert app_settings().value("target/et_root") == str(tmp_path / "no-such-executorch")


def test_run_on_real_qemu_shows_the_job_result(qtbot, panel, tmp_path: Path, monkeypatch) -> None:
    """The whole road with a stand-in checkout: job worker -> lower step skipped (.bpte) -> ops check ->
    libraries -> runner -> real QEMU -> the job's run section in the result view."""
    model = stand_in_run(tmp_path, monkeypatch, panel, "cmlens_selftest")
    panel.set_lowering(lowering_job(str(model), LowerRequest("cortex-m55", "legacy")))
    steps: list[str] = []
    panel.job_slot.event.connect(lambda kind, data: steps.append(data["name"]) if kind == "run_step" else None)
    with finished(qtbot, panel) as blocker:
        panel.run_btn.click()
    assert blocker.args == ["run", 0], panel.console.toPlainText()[-3000:]
    assert steps == ["lower", "check ops", "libraries", "build runner", "run", "results"]
    run = panel.last_job_result["steps"]["run"]
    assert run["outcome"] == "PASS" and run["board"] == "mps3-an547" and run["simulator"] == "qemu"
    assert panel.last_result["outcome"] == "PASS"
    assert panel.result_view.outcome.text() == "PASS"
    details = panel.result_view.details.toPlainText()
    assert "mps3-an547" in details and "not cycle-accurate" in details
    console = panel.console.toPlainText()
    assert "uart> " in console and "  | fake cmake --build" in console
    assert "cmlens: all 1 operators of the model have kernels" in console or "cmlens: ops:" in console
    assert panel.progress.value() == panel.progress.maximum() and panel.run_btn.isEnabled()


@pytest.mark.parametrize("where", ["build", "simulation"])
def test_cancel_mid_run_ends_the_worker_and_its_children(qtbot, panel, tmp_path: Path, monkeypatch,
                                                         where: str) -> None:
    """Cancel while the libraries build (a `cmake --build` that never ends) or while the firmware runs on
    QEMU (a firmware that never ends): the job worker, the build and QEMU all end."""
    model = stand_in_run(tmp_path, monkeypatch, panel, "cmlens_hang", hang_build=where == "build")
    panel.set_lowering(lowering_job(str(model), LowerRequest("cortex-m55", "legacy")))
    panel.timeout.setValue(600)
    wanted = "sleep 900" if where == "build" else "qemu-system-arm"
    panel.run_btn.click()
    pid = panel.job_slot.process_id()
    qtbot.waitUntil(lambda: any(wanted in cmd for cmd in descendants(pid).values()), timeout=RUN_MS)
    qtbot.wait(500)
    children = descendants(pid)
    if where == "build":
        assert "fake cmake: building forever" in panel.console.toPlainText()
    with finished(qtbot, panel, 30_000) as blocker:
        panel.cancel_btn.click()
    assert blocker.args == ["run", -1]
    assert panel.result_view.outcome.text() == "CANCELLED" and panel.run_btn.isEnabled()
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=20_000)          # the worker exited and was reaped
    alive = {p: c for p, c in children.items() if Path(f"/proc/{p}").exists()
             and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()}
    assert not alive, f"left running after cancel: {alive}"
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_cancel_while_lowering_ends_the_worker_at_once(qtbot, panel, tmp_path: Path, monkeypatch) -> None:
    """Before any build the worker has no children: Cancel ends it at once, not after the grace it gets
    to stop a build (it would not see SIGTERM while ExecuTorch imports or a pass runs)."""
    stand_in_run(tmp_path, monkeypatch, panel, "cmlens_selftest")
    monkeypatch.setenv("CMLENS_CACHE", str(tmp_path / "lowering-cache"))       # a cold lowering
    panel.set_lowering(lowering_job("ds_cnn", LowerRequest("cortex-m55", "legacy")))
    panel.run_btn.click()
    qtbot.waitUntil(lambda: "cmlens: step lower" in panel.console.toPlainText(), timeout=RUN_MS)
    pid = panel.job_slot.process_id()
    with finished(qtbot, panel, 5_000) as blocker:
        panel.cancel_btn.click()
    assert blocker.args == ["run", -1]
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=3_000)         # the grace is 10 s: not waited
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_closing_mid_build_leaves_no_process(qtbot, panel, tmp_path: Path, monkeypatch) -> None:
    """The window closes (shutdown) while the libraries build: the worker still stops its build
    before it goes, so no compiler is orphaned."""
    model = stand_in_run(tmp_path, monkeypatch, panel, "cmlens_hang", hang_build=True)
    panel.set_lowering(lowering_job(str(model), LowerRequest("cortex-m55", "legacy")))
    panel.run_btn.click()
    pid = panel.job_slot.process_id()
    qtbot.waitUntil(lambda: any("sleep 900" in c for c in descendants(pid).values()), timeout=RUN_MS)
    children = descendants(pid)
    panel.shutdown()                                   # blocks until the worker has ended its children
    assert not panel.job_slot.has_processes()
    assert not [p for p in (pid, *children) if Path(f"/proc/{p}").exists()
                and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()]


def test_selftest_streams_uart_and_passes(qtbot, panel) -> None:
    with finished(qtbot, panel) as blocker:
        panel.selftest_btn.click()
        qtbot.waitUntil(lambda: panel.cancel_btn.isEnabled(), timeout=5_000)
    assert blocker.args == ["selftest", 0], panel.console.toPlainText()[-3000:]
    console = panel.console.toPlainText()
    assert "uart> " in console and "PASS" in console
    assert panel.result_view.outcome.text() == "PASS"
    assert "not cycle-accurate" in panel.result_view.details.toPlainText()
    assert panel.progress.value() == panel.progress.maximum()


def test_selftest_cancel_stops_qemu(qtbot, panel) -> None:
    """The hanging firmware never ends by itself: Cancel must end QEMU (no thread or process left)."""
    panel.timeout.setValue(300)
    panel.selftest("hang")
    qtbot.waitUntil(lambda: "uart>" in panel.console.toPlainText(), timeout=RUN_MS)
    qemu = {p: c for p, c in descendants(os.getpid()).items() if "qemu-system-arm" in c}
    assert qemu
    worker = panel.tools.job.process_id()           # the self-test is a Job: QEMU is the job worker's child
    assert worker and set(qemu) <= set(descendants(worker)), (worker, qemu)
    assert panel.tools.job.job.steps == ("selftest",) and panel.tools.job.job.selftest == "hang"
    with finished(qtbot, panel, 20_000) as blocker:
        panel.cancel_btn.click()
    assert blocker.args == ["selftest", -1]
    assert panel.result_view.outcome.text() == "CANCELLED"
    # the window goes on at once; the worker stops QEMU's process group and exits within its grace
    qtbot.waitUntil(lambda: not [p for p in qemu if Path(f"/proc/{p}").exists()], timeout=15_000)
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=15_000)


def test_gap_plot_emits_final_node_ids(qtbot, panel) -> None:
    """A job_result whose run section has per-layer gaps (the shape of a real ds_cnn run) drives the
    plot; a click on a point emits its final-graph node id."""
    layers = [{"index": i, "node_id": f"n{i}", "mse": float(i), "mse_real": float(i) * 1e-4,
               "mismatched": i, "numel": 10, "dtype": "torch.int8"} for i in range(3)]
    run = {"outcome": "FAIL", "exit_code": 3, "board": "mps3-an547", "simulator": "qemu",
           "tests": [{"passed": False}], "error_stats": [], "cycles": None, "faults": [],
           "gaps": {"layers": layers, "first_divergence": "n1", "identical_layers": 1}}
    with qtbot.waitSignal(panel.runFinished, timeout=1000) as got:
        panel.show_job_result({"status": "done", "exit_code": 1, "steps": {"run": run}, "error": None,
                               "timings_s": {"run_s": 1.5}})
    assert got.args[0]["gaps"] == run["gaps"] and panel.last_exit == 1
    assert panel.result_view.outcome.text() == "FAIL"
    assert "first divergence n1" in panel.result_view.details.toPlainText()
    pts = panel.gap_plot.scatter.points()
    assert [p.data() for p in pts] == ["n0", "n1", "n2"]
    with qtbot.waitSignal(panel.nodeClicked, timeout=1000) as blocker:
        panel.gap_plot._clicked(panel.gap_plot.scatter, [pts[1]])
    assert blocker.args == ["n1"]
    json.dumps(run)


@pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"),
                    reason="needs a real ExecuTorch checkout: set CMLENS_TEST_ET_ROOT (and CMLENS_TEST_CMSIS_NN)")
def test_real_ds_cnn_run_with_gaps(qtbot, panel) -> None:
    """The real thing (not in CI): ds_cnn lowered, built and run on QEMU M55 with an ETDump; with
    CMLENS_TEST_SCREENSHOT=path the panel is saved there (docs/screenshots/target_panel.png)."""
    panel.set_lowering(lowering_job("ds_cnn", LowerRequest("cortex-m55", "legacy")))
    panel.et_root.setText(os.environ["CMLENS_TEST_ET_ROOT"])
    panel.cmsis.setText(os.environ.get("CMLENS_TEST_CMSIS_NN", ""))
    panel.etdump.setChecked(True)
    with finished(qtbot, panel, 1_800_000) as blocker:
        panel.run_btn.click()
    assert blocker.args == ["run", 0], panel.console.toPlainText()[-3000:]
    assert panel.result_view.outcome.text() == "PASS"
    gaps = panel.last_result["gaps"]
    assert gaps and len(gaps["layers"]) == 12
    assert [p.data() for p in panel.gap_plot.scatter.points()][1] == "cortex_m_quantized_depthwise_conv2d_default"
    if os.environ.get("CMLENS_TEST_SCREENSHOT"):
        panel.tabs.setCurrentWidget(panel.gap_plot)
        panel.resize(1000, 820)
        qtbot.wait(200)
        panel.grab().save(os.environ["CMLENS_TEST_SCREENSHOT"])


def test_console_shows_etdump_base64_lines_abbreviated(panel) -> None:
    """A raw ETDump line streamed from the run is shown abbreviated; results come from the job's JSON,
    so nothing is lost."""
    import base64

    payload = base64.b64encode(bytes(118024)).decode()
    panel.results.on_line("uart", f'echo "{payload}" | base64 -d >debug_buffer.bin')
    text = panel.console.toPlainText()
    assert 'uart> echo "<base64, 118,024 bytes decoded>" | base64 -d >debug_buffer.bin' in text
    assert payload[:200] not in text
