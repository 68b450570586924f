"""The numerics feature: per-layer float vs fake-quant vs lowered plots, run in the numerics worker process."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
