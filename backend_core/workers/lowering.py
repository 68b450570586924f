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
   "memory": {...backend_core.memory section...}|null}      (with --memory)
  {"type": "error", "exit_code": 2, "message": "...", "hint": "..."}   (bad input)

Human-readable logs go to stderr.
"""
from __future__ import annotations

import argparse
import json
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
    from ..artefacts.sniff import is_artefact_path

    if is_artefact_path(args.source) and not args.memory:   # read, not lowered: skip the lowering imports
        from ..artefacts.worker import run_artefact

        return run_artefact(args.source, companions, use_cache=not args.no_cache, report=args.report,
                            pte=args.pte)

    from ..lowering import lower
    from ..pipeline.stages import PipelineOptions

    calib: str | int | None = args.calib
    if isinstance(calib, str) and calib.isdigit():
        calib = int(calib)
    planned_sent = False

    def on_stage(snap: Any, planned: list[str]) -> None:
        nonlocal planned_sent
        if not planned_sent:
            emit({"type": PLANNED, "stages": planned})
            planned_sent = True
        emit({"type": STAGE, "snapshot": snap.to_dict()})

    try:
        emit({"type": STATUS, "text": "importing ExecuTorch (first time takes ~8 s)"})
        result = lower(args.source, PipelineOptions(args.target, args.flow, calib, activations=args.activations,
                                                    channels_last=args.channels_last),
                       on_stage=on_stage, use_cache=not args.no_cache,
                       verify_suggestions=args.verify_suggestions,
                       want_pte=bool(args.pte or args.memory), want_bpte=bool(args.bpte),
                       on_status=lambda t: emit({"type": STATUS, "text": t}),
                       artefact_companions=companions or None)
    except Exception as e:  # noqa: BLE001 - report anything, never die silently
        msg = error_message(e, "lowering worker")
        emit(msg)
        return msg["exit_code"]
    memory = None
    if args.memory:
        from ..memory.source import memory_for_result

        try:
            memory = memory_for_result(result)
        except Exception as e:  # noqa: BLE001 - the lowering itself succeeded: report, do not die
            memory = {"error": f"{type(e).__name__}: {e}"}
    if result.status == "done" and "torch" in sys.modules:
        from ..artefacts.schemas import ensure_table

        ensure_table()          # once per installed stack: a .pte opened later needs no torch import
    report_path = None
    if args.report:
        from pathlib import Path

        report = result.report()
        if memory is not None:
            report["memory"] = memory
        Path(args.report).write_text(json.dumps(report, default=str))
        report_path = args.report
    from ..pipeline.artifacts import write_bytes

    if args.pte and "model.pte" in result.blobs:
        write_bytes(args.pte, result.blobs["model.pte"])
    if args.bpte and "model.bpte" in result.blobs:
        write_bytes(args.bpte, result.blobs["model.bpte"])
    artefact = getattr(result, "artefact", None)      # read from a .pte/.bpte/.etrecord/.etdump
    if artefact is not None:
        emit({"type": RESULT, "result": {"artefact": artefact.extras()}})
    emit({"type": DONE, "status": result.status, "error": result.error, "verdicts": result.verdicts,
          "from_cache": result.from_cache, "seconds": result.seconds, "report": report_path,
          "memory": memory})
    return 0 if result.status == "done" else 3


if __name__ == "__main__":
    sys.exit(main())
