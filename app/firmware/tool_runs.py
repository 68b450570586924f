"""The panel's two tool checks, which are not Jobs (they run no model): the self-test firmware (build it,
run it on the simulator: proves the toolchain and the simulator without ExecuTorch) and the doctor (which
tools, simulators and checkout are there, and the command that installs what is missing).

Both are Qt-free, torch-free backend_core calls (`firmware.selftest.run_selftest`,
`firmware.doctor.run_doctor`), run on a background thread of their own (app.runtime.BackgroundRunner,
made per run and stopped after it). Cancel sets the self-test's cancel event: its build or simulator
process group is killed (backend_core.target.toolchain.process) and the call returns."""
from __future__ import annotations

import threading
from dataclasses import asdict
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from app.runtime.background import BackgroundRunner

SELFTEST_MAX_TIMEOUT = 60.0


class ToolRuns(QObject):
    """Signals:
        line(str, str): (stream, text) of the self-test's build and simulator.
        step(str): a step of the self-test (protocol.SELFTEST_STEPS).
        finished(str, object): (kind, outcome): kind "selftest" | "doctor"; outcome is
            {"result": dict, "exit_code": int} (the self-test's result / the doctor's report),
            {"error": {...}, "exit_code": int}, or {"cancelled": True}.
    """

    line = Signal(str, str)
    step = Signal(str)
    finished = Signal(str, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner: BackgroundRunner | None = None
        self._kind = ""
        self._cancel = threading.Event()

    def is_running(self) -> bool:
        return self._runner is not None

    def selftest(self, target: str, sim: str, timeout: float, variant: str = "selftest") -> None:
        """Build and run the self-test firmware `variant` (the diagnostic ones: selftest-fail, hang, fault)."""
        from backend_core.target.doctor.selftest import run_selftest

        cancel = self._cancel = threading.Event()

        def work() -> dict[str, Any]:
            res = run_selftest(target, sim, min(timeout, SELFTEST_MAX_TIMEOUT), variant=variant,
                               on_line=self.line.emit, on_step=self.step.emit, cancel_event=cancel)
            data = asdict(res)
            data["elf"] = str(res.elf)
            return {"result": data, "exit_code": 0 if res.passed else 1 if res.outcome == "FAIL" else 3}

        self._start("selftest", work)

    def doctor(self, et_root: str, cmsis_nn: str) -> None:
        from backend_core.target.doctor.machine import run_doctor

        def work() -> dict[str, Any]:
            report = run_doctor(et_root=et_root or None, cmsis_nn=cmsis_nn or None)
            return {"result": report.to_dict(), "exit_code": 0 if report.ok else 2}

        self._start("doctor", work)

    def cancel(self) -> bool:
        if self._runner is None:
            return False
        self._cancel.set()
        return True

    def shutdown(self) -> None:
        """Stop now (window closing): cancel, then join the thread (the killed process group first)."""
        self._cancel.set()
        if self._runner is not None:
            self._runner.shutdown()
            self._drop_runner()

    # -- internals ---------------------------------------------------------------------------------
    def _start(self, kind: str, work: Callable[[], dict[str, Any]]) -> None:
        if self._runner is not None:
            raise RuntimeError(f"a {self._kind} is already running")
        self._kind = kind
        runner = self._runner = BackgroundRunner(f"cmlens-{kind}", self)
        runner.done.connect(lambda _id, out: self._end(_guarded_outcome(out)))
        runner.failed.connect(lambda _id, message: self._end(
            {"error": {"message": message.splitlines()[0] if message else "error", "detail": message},
             "exit_code": 3}))
        runner.submit(lambda: _guarded(work, self._cancel))

    def _end(self, outcome: dict[str, Any]) -> None:
        kind = self._kind
        if self._runner is not None:
            self._runner.shutdown()
            self._drop_runner()
        self.finished.emit(kind, outcome)

    def _drop_runner(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.deleteLater()


def _guarded(work: Callable[[], dict[str, Any]], cancel: threading.Event) -> dict[str, Any]:
    """Typed errors (missing tool exit 2, build/run failure exit 3) and a cancel as outcomes."""
    from backend_core.common.errors import Cancelled, CmlensError

    try:
        out = work()
    except Cancelled:
        return {"cancelled": True}
    except CmlensError as exc:
        return {"error": {"message": exc.message, "hint": exc.hint, "detail": exc.detail,
                          "type": type(exc).__name__}, "exit_code": exc.exit_code}
    return {"cancelled": True} if cancel.is_set() else out


def _guarded_outcome(out: object) -> dict[str, Any]:
    return out if isinstance(out, dict) else {"error": {"message": f"unexpected result {out!r}"}, "exit_code": 3}
