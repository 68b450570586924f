"""Jobs as data, at the top of backend_core: a `Job` (model source, lowering options, board, steps,
what to keep; JSON) -> `execute_job` -> `JobResult` (JSON). The CLI subcommands, the GUI's worker
processes and sweeps all run jobs; the steps compose the feature packages, none of which imports this
package (the layers contract in pyproject.toml)."""
from backend_core.orchestration.jobs.result import CANCELLED, DONE, FAILED, JobResult
from backend_core.orchestration.jobs.execute_job import EventCallback, execute_job
from backend_core.orchestration.jobs.spec import (KEEP, STEPS, ExportOptions, Job, LowerRequest, MemoryOptions, ReproOptions,
                                                  RunOptions)

__all__ = ["CANCELLED", "DONE", "EventCallback", "ExportOptions", "FAILED", "KEEP", "Job", "JobResult", "LowerRequest",
           "MemoryOptions", "ReproOptions", "RunOptions", "STEPS", "execute_job"]
