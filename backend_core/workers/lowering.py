"""The lowering worker process: `python -m backend_core.workers.lowering SOURCE [options]`.

The GUI runs ExecuTorch here, not in its own process: imports take ~8 s, FX passes hold the
GIL, user code may crash, and ending a process is an immediate, clean cancel. The worker
streams backend_core.protocol lines on stdout:

  {"type": "status", "text": "importing ExecuTorch"}
  {"type": "planned", "stages": ["float export", ...]}
  {"type": "stage", "snapshot": {...GraphSnapshot.to_dict()...}}
  {"type": "result", "result": {"artefact": {...}}}   (an artefact was read: memory plan, bundle, ETDump overlay)
  {"type": "done", "status": "done|failed", "error": {...}|null, "verdicts": {...},
   "from_cache": bool, "seconds": float, "report": "/path/report.json"|null,
   "memory": {...backend_core.memory section...}|null,     (with --memory)
   "dependencies": [{"path", "name", "kind", "sha256"}, ...],   (the files the model was made from: the GUI
   "cache_note": "helper.py changed"|""}                          watches them; why the cache was not used)
  {"type": "error", "exit_code": 2, "message": "...", "hint": "..."}   (bad input)

Human-readable logs go to stderr.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..protocol import DONE, PLANNED, RESULT, STAGE, STATUS, emit, error_message


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend_core.workers.lowering")
    ap.add_argument("source")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--flow", default="legacy", choices=["legacy", "explicit"])
    ap.add_argument("--calib", default=None)
    ap.add_argument("--activations", default="int8", choices=["int8", "int16"])
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--keep-going", action="store_true",
                    help="when an ExecuTorch pass fails on an op, leave that op in float and lower the rest")
    ap.add_argument("--channels-last", action="store_true",
                    help="convert 4-D weights and inputs to channels_last (default: the model as given)")
    ap.add_argument("--verify-suggestions", action="store_true",
                    help="re-lower modified copies to check the fixes the tool can try")
    ap.add_argument("--report", default=None, help="also write the JSON report here")
    ap.add_argument("--pte", default=None)
    ap.add_argument("--bpte", default=None)
    for flag in ("--etdump", "--etrecord", "--debug-buffer", "--program"):   # companions of an artefact
        ap.add_argument(flag, default=None)
    ap.add_argument("--memory", action="store_true",
                    help="also serialise the .pte and put its memory report in the done message")
    args = ap.parse_args(argv)
    companions = {k: v for k, v in (("etdump", args.etdump), ("etrecord", args.etrecord),
                                    ("debug_buffer", args.debug_buffer), ("program", args.program)) if v}
    from ..models.sniff import is_artefact_path

    if is_artefact_path(args.source) and not args.memory:   # read, not lowered: skip the lowering imports
        from ..artefacts.worker import run_artefact

        return run_artefact(args.source, companions, use_cache=not args.no_cache, report=args.report,
                            pte=args.pte)

    from ..jobs import Job, LowerRequest, run_job

    calib: str | int | None = args.calib
    if isinstance(calib, str) and calib.isdigit():
        calib = int(calib)
    planned_sent = False

    def on_event(kind: str, data: dict[str, Any]) -> None:
        nonlocal planned_sent
        if kind == "status":
            emit({"type": STATUS, "text": data["text"]})
        elif kind == "stage":
            if not planned_sent:
                emit({"type": PLANNED, "stages": data["planned"]})
                planned_sent = True
            emit({"type": STAGE, "snapshot": data["snapshot"].to_dict()})

    outputs = {k: v for k, v in (("pte", args.pte), ("bpte", args.bpte), ("json", args.report)) if v}
    try:
        emit({"type": STATUS, "text": "importing ExecuTorch (first time takes ~8 s)"})
        job = Job(args.source, LowerRequest(args.target, args.flow, args.activations, args.channels_last, calib,
                                            verify_suggestions=args.verify_suggestions,
                                            use_cache=not args.no_cache, companions=companions or None,
                                            keep_going=args.keep_going),
                  steps=("lower", "memory") if args.memory else ("lower",), outputs=outputs or None)
        done = run_job(job, on_event)
        if done.exception is not None and done.lowering is None:
            raise done.exception
        result = done.lowering
    except Exception as e:  # noqa: BLE001 - report anything, never die silently
        msg = error_message(e, "lowering worker")
        emit(msg)
        return msg["exit_code"]
    memory = None
    if args.memory:         # the lowering itself succeeded: a memory failure is reported, not fatal
        memory = done.steps.get("memory") or (
            {"error": done.error["message"]} if done.error and done.error.get("step") == "memory" else None)
    if result.status == "done" and "torch" in sys.modules:
        from ..artefacts.schemas import ensure_table

        ensure_table()          # once per installed stack: a .pte opened later needs no torch import
    report_path = done.files.get("json")       # the job's one writer: .pte, .bpte + references, JSON
    artefact = getattr(result, "artefact", None)      # read from a .pte/.bpte/.etrecord/.etdump
    if artefact is not None:
        emit({"type": RESULT, "result": {"artefact": artefact.extras()}})
    emit({"type": DONE, "status": result.status, "error": result.error, "verdicts": result.verdicts,
          "from_cache": result.from_cache, "seconds": result.seconds, "report": report_path,
          "memory": memory, "dependencies": result.dependencies, "cache_note": result.cache_note})
    return 0 if result.status == "done" else 3


if __name__ == "__main__":
    sys.exit(main())
