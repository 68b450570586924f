"""Sweeps: a matrix of Jobs (models × `--vary` axes) run on any backend_core.orchestration.execute Executor (the local
process pool by default, or a dask.distributed cluster), streamed into a resumable folder with a dashboard and baselines."""
from backend_core.orchestration.jobs.options import AXES, parse_vary   # the one option grammar (jobs/options.py)
from backend_core.orchestration.sweep.matrix import build_jobs, expand_models
from backend_core.orchestration.sweep.run import Progress, SweepOutcome, run_sweep
from backend_core.orchestration.sweep.store import SweepStore, job_id

__all__ = ["AXES", "Progress", "SweepOutcome", "SweepStore", "build_jobs",
           "expand_models", "job_id", "parse_vary", "run_sweep"]
