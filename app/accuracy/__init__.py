"""The Accuracy tab: the `evaluate` step's result (backend_core.analyses.accuracy) as bars, confusion matrices and
the flipped samples with the layer that flipped each. The evaluation runs as a Job in the job worker."""
from .panel import AccuracyPanel

__all__ = ["AccuracyPanel"]
