"""Sweeps: a matrix of Jobs (models × `--vary` axes) run on any backend_core.execute Executor (the local
process pool by default, or a dask.distributed cluster), streamed into a resumable folder with a dashboard and baselines."""
from .matrix import AXES, build_jobs, expand_models, parse_vary
from .run import Progress, SweepOutcome, run_sweep
from .store import SweepStore, job_id

__all__ = ["AXES", "Progress", "SweepOutcome", "SweepStore", "build_jobs",
           "expand_models", "job_id", "parse_vary", "run_sweep"]
