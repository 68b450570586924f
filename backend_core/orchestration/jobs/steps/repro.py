"""The repro step (`cmlens repro`, the window's "Write reproducer" button): reduce a model whose ExecuTorch
pass fails to one standalone file (backend_core.analyses.repro), and prove it in a fresh Python process. A file
that does not fail the same way there is a failed step (exit 3): the file is written but proves nothing."""
from __future__ import annotations

import threading
from typing import Any, Callable

from backend_core.common.errors import StageFailedError
from backend_core.orchestration.jobs.result import FAILED, JobResult
from backend_core.orchestration.jobs.spec import Job


def repro_step(job: Job, res: JobResult, emit: Callable[[str, dict[str, Any]], None],
               cancel: threading.Event) -> None:
    from backend_core.analyses.repro import make_repro
    from backend_core.analyses.repro.minimize import same_error

    rep = make_repro(job.model, job.lower.pipeline_options(), job.repro.output,
                     on_status=lambda text: emit("status", {"text": text}), fresh_check=job.repro.fresh_check,
                     is_cancelled=cancel.is_set)
    section = rep.to_dict()
    section["reproduces"] = same_error(rep.fresh_process, rep.expected) if job.repro.fresh_check else None
    res.steps["repro"] = section
    res.files["repro"] = rep.path
    if section["reproduces"] is False:
        exc = StageFailedError("repro", f"`python {rep.path}` in a fresh process gave "
                               f"{rep.fresh_process or 'no error'!r}, not the expected error {rep.expected!r}.",
                               "The failure depends on this process's state (an import order, a cache): file "
                               "the model itself, with the written file as a start.")
        res.status, res.exception = FAILED, exc
        res.error = {"step": "repro", "type": type(exc).__name__, "message": exc.message, "hint": exc.hint,
                     "detail": "", "exit_code": exc.exit_code}
