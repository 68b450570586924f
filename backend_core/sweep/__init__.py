"""Sweeps: a matrix of Jobs (models × `--vary` axes) run on a local process pool (default) or a
dask.distributed cluster, streamed into a resumable folder with a dashboard and baselines."""
from .executors import DaskCluster, LocalPool
from .matrix import AXES, build_jobs, expand_models, parse_vary
from .run import Progress, SweepOutcome, run_sweep
from .store import SweepStore, job_id

__all__ = ["AXES", "DaskCluster", "LocalPool", "Progress", "SweepOutcome", "SweepStore", "build_jobs",
           "expand_models", "job_id", "parse_vary", "run_sweep"]
