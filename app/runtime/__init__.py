"""Process and thread plumbing shared by every feature: the worker-process client, the job state machine, the CLI child process,
the background thread runner, and the PySide6 workaround."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
