"""The `profile` step: the per-op profile of a finished run on the final graph of the same lowering.
Failures are reported on the run, not raised: the run itself already happened."""
from __future__ import annotations

from typing import Any, Callable

from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.target.profile.run import profile_run, run_unit
from backend_core.common.snapshot.model import GraphSnapshot


def attach_profile(run: Any, source: str, options: PipelineOptions, icount: bool, record: Any,
                   emit: Callable[[str, str], None], final: GraphSnapshot | None = None) -> None:
    """Set run.profile / run.profile_problem for a ModelRunResult (`final`: the final graph of the run's
    own lowering, None for a ready .pte/.bpte, which has no graph: the profile is then by op only)."""
    emit("cmlens", "per-op profile: ETDump profiling events on the final graph")
    try:
        if record is not None:
            final = record.final
        run.profile, run.profile_problem = profile_run(run.files.get("etdump.bin"), final,
                                                       run_unit(run.board, icount), model=run.model,
                                                       target=run.target)
    except Exception as exc:  # noqa: BLE001  a broken ETDump must not lose the run's result
        run.profile, run.profile_problem = None, f"{type(exc).__name__}: {exc}"
    if run.profile is not None and "debug_buffer.bin" in run.files:
        run.profile.notes.append("intermediate outputs were dumped (--etdump): every op's count includes "
                                 "copying its output into the debug buffer; profile without --etdump")
    if run.profile_problem:
        emit("cmlens", f"per-op profile: none ({run.profile_problem})")
