"""A sweep folder (`cmlens sweep --out DIR`) as a table in the app: sortable, filterable, failing cells
marked; double-clicking a row asks the shell to open that job's lowering."""
from .view import SweepView

__all__ = ["SweepView"]
