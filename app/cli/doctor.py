"""`cmlens doctor`: the toolchain, simulators and ExecuTorch checkout, and what installs what is missing."""
from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from .common import write_json
from .outputs import add_json_output, json_destination


def add_doctor_command(subparsers: argparse._SubParsersAction) -> None:
    d = subparsers.add_parser(
        "doctor", help="check the toolchain, simulators and ExecuTorch checkout",
        description="Find arm-none-eabi-gcc, newlib, cmake, ninja, qemu-system-arm, the Corstone FVPs, "
                    "graphviz, the ExecuTorch checkout and CMSIS-NN; print versions and, for anything "
                    "missing, the command that installs it. Exit 0 when the QEMU flow can run, else 2.")
    d.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    d.add_argument("--cmsis-nn", metavar="PATH", help="CMSIS-NN source tree (default: $CMSIS_NN_PATH)")
    add_json_output(d, "write the findings as JSON to F")
    d.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the doctor report; 0 when everything the QEMU flow needs is present, else 2. The report is the
    doctor step of a Job (the window's Doctor button runs the same Job in its job worker)."""
    from backend_core.orchestration.jobs.spec import Job, RunOptions
    from backend_core.target.doctor.machine import DoctorReport

    from .common import submit

    out = out or sys.stdout
    json_file, json_stdout = json_destination(args)
    res = submit(Job("", steps=("doctor",), run=RunOptions(et_root=getattr(args, "et_root", None),
                                                           cmsis_nn=getattr(args, "cmsis_nn", None))))
    res.raise_error()
    report = DoctorReport.from_dict(res.steps["doctor"])
    if json_stdout:
        print(json.dumps(report.to_dict(), indent=2), file=out)
    else:
        print(report.to_text(), file=out)
    write_json(json_file, report.to_dict())
    return 0 if report.ok else 2
