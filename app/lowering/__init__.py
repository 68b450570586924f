"""The lowering feature: the session model (worker process, snapshots, diffs), the view state, and the views that read them
(model bar, pass timeline, node inspector, fallback table, logs, error panel, exporter)."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
