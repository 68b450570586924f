"""Minimal reproducers of ExecuTorch pass failures (`cmlens repro`)."""
from .minimize import ReproResult, make_repro

__all__ = ["ReproResult", "make_repro"]
