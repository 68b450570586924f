"""Minimal reproducers of ExecuTorch pass failures (`cmlens repro`)."""
from backend_core.repro.minimize import ReproResult, make_repro

__all__ = ["ReproResult", "make_repro"]
