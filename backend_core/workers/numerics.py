"""The numerics worker process: `python -m backend_core.workers.numerics SOURCE [options]`.

Like the lowering worker, the GUI runs ExecuTorch here and never imports torch itself; ending
the process cancels. backend_core.protocol lines on stdout:

  {"type": "status", "text": "importing ExecuTorch"}
  {"type": "progress", "phase": "lowering"|"analysis", "done": 3, "total": 12, "text": "..."}
  {"type": "result", "result": {...NumericsResult.to_dict()...}}
  {"type": "error", "exit_code": 2|3, "message": "...", "hint": "...", "detail": "..."}
  {"type": "done", "status": "done"|"failed", "exit_code": 0|2|3, "seconds": 12.3}

Progress lines are throttled to about ten a second. Human-readable logs go to stderr.
A line on stdin reading "cancel" (or closing stdin, with --cancel-on-eof) stops between stages.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from ..protocol import DONE, PROGRESS, RESULT, STATUS, emit, error_message


class _Throttle:
    def __init__(self, phase: str, interval: float = 0.1) -> None:
        self.phase, self.interval, self.last = phase, interval, 0.0

    def __call__(self, done: int, total: int, text: str) -> None:
        now = time.monotonic()
        if done < total and now - self.last < self.interval:
            return
        self.last = now
        emit({"type": PROGRESS, "phase": self.phase, "done": done, "total": total, "text": text})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend_core.workers.numerics")
    ap.add_argument("source")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--flow", default="legacy", choices=["legacy", "explicit"])
    ap.add_argument("--calib", default=None)
    ap.add_argument("--inputs", default=None, help="N random samples, or a folder of .pt/.npy")
    ap.add_argument("--json", default=None, help="also write the result JSON here")
    ap.add_argument("--channels-last", action="store_true",
                    help="convert 4-D weights and inputs to channels_last (default: the model as given)")
    ap.add_argument("--keep-going", action="store_true",
                    help="compare the kept-going lowering (ops whose ExecuTorch pass fails left in float)")
    ap.add_argument("--cancel-on-eof", action="store_true",
                    help="stop when stdin closes (the GUI closes it to cancel)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    cancel = threading.Event()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "cancel":
                cancel.set()
                return
        if args.cancel_on_eof:
            cancel.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    from ..numerics.inputs import parse_inputs

    try:
        parse_inputs(args.inputs)                  # fails before the 8 s import
        emit({"type": STATUS, "text": "importing ExecuTorch (first time takes ~8 s)"})
        from ..jobs import Job, LowerRequest, run_job
        from ..jobs.numerics_step import progress_events
        from ..jobs.spec import NumericsOptions

        calib: Any = int(args.calib) if args.calib and str(args.calib).isdigit() else args.calib
        job = Job(args.source, LowerRequest(args.target, args.flow, channels_last=args.channels_last, calib=calib,
                                            keep_going=args.keep_going),
                  steps=("lower", "numerics"), numerics=NumericsOptions(inputs=args.inputs))
        done = run_job(job, progress_events(_Throttle("lowering"), _Throttle("analysis")), cancel)
        if done.exception is not None:
            raise done.exception
        result = done.numerics
    except Exception as e:  # noqa: BLE001 - report anything, never die silently
        msg = error_message(e, "numerics worker")
        emit(msg)
        emit({"type": DONE, "status": "failed", "exit_code": msg["exit_code"], "seconds": time.perf_counter() - t0})
        return msg["exit_code"]
    d = result.to_dict()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(d, f, allow_nan=False)
    emit({"type": RESULT, "result": d})
    emit({"type": DONE, "status": "done", "exit_code": 0, "seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
