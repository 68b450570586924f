"""Minimal reproducers of ExecuTorch pass failures (`cmlens repro`)."""
from backend_core.analyses.repro.minimize import ReproResult, make_repro

__all__ = ["ReproResult", "make_repro"]
