"""`cmlens evaluate MODEL`: does the int8 model still do its job? Float, PT2E fake-quant and the lowered
program (on the host) on the same labelled samples — the model's get_eval_data() or a --data folder —
with top-1/top-5, agreement with float, per-class accuracy, ST Edge AI's output metrics, and for every
prediction int8 flipped, the layer where that sample's error left the usual path.

It runs a Job (steps lower + evaluate) like every subcommand. Exit 0 done, 2 bad input (model, data,
options), 3 a stage or the evaluation failed, 130 interrupted."""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any


from .common import guarded, lower_request_from, print_error, submit, write_json
from .outputs import add_output
from .lowering_flags import add_lowering_flags


def add_evaluate_command(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate", help="accuracy on labelled data: float vs fake-quant vs lowered, and why predictions flipped",
        description="Lower MODEL, then run the float model, the PT2E fake-quant model and the lowered program "
                    "(ExecuTorch's Python reference kernels of the cortex_m ops) on the same labelled samples. "
                    "Prints top-1/top-5 accuracy, agreement with float, per-class accuracy, RMSE/MAE/L2 relative "
                    "error/cosine of the outputs against float (ST Edge AI's validate metrics), and for each sample "
                    "whose prediction changed, the first layer where its error departs from the usual error.",
        epilog="Data: the model's get_eval_data() (a model file's function yielding (inputs, label); the zoo's "
               "digits_cnn has its held-out split), or --data DIR: *.npy/*.pt samples with labels.csv "
               "(file,label: a class index, or a .npy/.pt target tensor for regression), or images in one "
               "sub-folder per class (the model file's preprocess(image) if it defines one). Keep calibration "
               "(--calib) and evaluation data apart: samples in both are named in a warning.")
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME] or path/to/model.pt2")
    p.add_argument("--data", metavar="DIR", help="labelled samples (default: the model's get_eval_data())")
    add_lowering_flags(p, "calib", "target", "flow", "channels-last", "keep-going", "rewrite")
    p.add_argument("--limit", type=int, metavar="N", help="evaluate the first N samples only")
    p.add_argument("--no-flips", action="store_true", help="do not trace flipped predictions to a layer")
    p.add_argument("--threshold-db", type=float, default=3.0, metavar="DB",
                   help="a layer departs when a flipped sample's SQNR there is this far below the median "
                        "(default %(default)s)")
    p.add_argument("--on-target", type=int, nargs="?", const=16, default=0, metavar="K",
                   help="also run the first K samples (default 16) on the board (QEMU/FVP, --target's CPU) in one "
                        "firmware, each checked bit for bit against the lowered program")
    p.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout for --on-target (default: $EXECUTORCH_ROOT)")
    p.add_argument("--cmsis-nn", metavar="PATH", help="CMSIS-NN tree for --on-target (default: $CMSIS_NN_PATH)")
    add_output(p, "--json", metavar="F", help="write the job's report (lowering + the evaluate section) as JSON")
    add_output(p, "--html", metavar="F", help="write the report as a self-contained HTML file")
    p.add_argument("--verbose", "-v", action="store_true", help="show ExecuTorch logs")
    from .history_flags import add_record_flags

    add_record_flags(p)
    p.set_defaults(func=run_evaluate_command)


def run_evaluate_command(args: argparse.Namespace) -> int:
    out = sys.stdout
    json_file = Path(args.json) if args.json else None

    def work() -> int:
        from backend_core.common.errors import BadInputError
        from backend_core.stages.models import parse_model_source

        parse_model_source(args.model)                       # a bad source: exit 2 before the 8 s import
        if args.data:
            from backend_core.analyses.accuracy.data import folder_layout

            folder_layout(args.data)             # missing, empty or unlabelled: exit 2 in a second, not after lowering
        if args.limit is not None and args.limit < 1:
            raise BadInputError("--limit must be 1 or more.", "Pass the number of samples to evaluate.")
        if args.on_target < 0:
            raise BadInputError("--on-target K: K must be 1 or more.", "E.g. --on-target 16.")
        if args.on_target and not (args.et_root or os.environ.get("EXECUTORCH_ROOT")):
            raise BadInputError("--on-target needs an ExecuTorch checkout to build the runner.",
                                "Pass --et-root PATH (and --cmsis-nn PATH), or set EXECUTORCH_ROOT.")
        if not args.verbose:
            for name in ("", "torch", "executorch"):
                logging.getLogger(name).setLevel(logging.ERROR)
            os.environ.setdefault("TORCH_LOGS", "-all")
        print("… importing ExecuTorch (first time takes ~8 s)", file=sys.stderr, flush=True)
        from backend_core.analyses.accuracy.table import summary_lines
        from backend_core.orchestration.jobs import Job

        from .history_flags import recorded_steps
        from backend_core.orchestration.jobs.spec import EvaluateOptions

        outputs = {k: v for k, v in (("json", args.json), ("html", args.html)) if v} or None
        from backend_core.orchestration.jobs.spec import RunOptions

        job = Job(args.model, lower_request_from(args),
                  steps=recorded_steps(args, ("lower", "evaluate")), outputs=outputs,
                  run=RunOptions(et_root=args.et_root, cmsis_nn=args.cmsis_nn),
                  evaluate=EvaluateOptions(data=args.data, limit=args.limit, flips=not args.no_flips,
                                           threshold_db=args.threshold_db, on_target=args.on_target))

        last = {"t": 0.0}

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "status":
                text, now = data["text"], time.monotonic()
                m = re.search(r"(\d+)/(\d+)", text)          # "calibration sample 7/65": two lines a second
                if m and m.group(1) != m.group(2) and now - last["t"] < 0.5:
                    return
                last["t"] = now
                print(f"… {text}", file=sys.stderr, flush=True)
            elif kind == "line":
                print(data["line"], file=sys.stderr, flush=True)

        res = submit(job, on_event)
        from .history_flags import record_if_asked

        record_if_asked(args, res, source="evaluate")     # --record: a failure too, with its cause
        if res.exception is not None:                        # bad data / a failed lowering: cause and fix
            if "json" in res.files:                          # the report the job wrote stays, with the error
                report = json.loads(Path(res.files["json"]).read_text())
                report["error"] = res.error
                if res.status == "cancelled":                # stopped: say so, and where; no accuracy claimed
                    report["status"] = "cancelled"
                    report["cancelled"] = {**(report.get("cancelled") or {}), "step": res.error.get("step")}
                write_json(Path(res.files["json"]), report)
            return print_error(res.exception, sys.stderr)
        for line in summary_lines(res.steps["evaluate"]):
            print(line, file=out)
        for kind in ("json", "html"):
            if kind in res.files:
                print(f"wrote {kind}: {res.files[kind]}", file=out)
        return 0

    return guarded(work, json_file=json_file)
