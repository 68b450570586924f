"""The History tab: a model's recorded figures over its commits (backend_core.orchestration.history)."""
from .view import HistoryView

__all__ = ["HistoryView"]
