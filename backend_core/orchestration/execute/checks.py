"""What a worker can run: each executor asks its workers before a batch (a sweep names the worker
that lacks a tool, a checkout or ExecuTorch, instead of failing every row)."""
from __future__ import annotations

import os
import platform
import shutil
import socket
from typing import Any


def check_worker(steps: list[str], et_root: str | None = None) -> dict[str, Any]:
    """What this worker can run: the product and ExecuTorch import, and for run steps the toolchain,
    QEMU and the checkout. `problems` names each missing piece with its fix."""
    problems: list[str] = []
    info: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "python": platform.python_version()}
    try:
        from importlib.metadata import version

        info["executorch"] = version("executorch")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"executorch is not installed ({exc}): pip install cortexm-lens")
    if "run" in steps or "profile" in steps:
        for tool, pkg in (("arm-none-eabi-gcc", "gcc-arm-none-eabi"), ("cmake", "cmake"), ("ninja", "ninja-build"),
                          ("qemu-system-arm", "qemu-system-arm")):
            if shutil.which(tool) is None:
                problems.append(f"{tool} not found: apt-get install {pkg}")
        root = et_root or os.environ.get("EXECUTORCH_ROOT")
        if not root:
            problems.append("no ExecuTorch checkout: pass --et-root (the same path on every worker) or set "
                            "EXECUTORCH_ROOT in the worker's environment")
        else:
            from backend_core.common.errors import CmlensError
            from backend_core.target.toolchain.checkout import inspect_checkout

            try:
                inspect_checkout(root).require_buildable()
            except CmlensError as exc:
                problems.append(f"checkout {root}: {exc.message}")
    info["problems"] = problems
    return info
