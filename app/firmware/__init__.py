"""The Run-on-target feature: a target run is a Job (lower, build, run on QEMU / FVP) in the job worker
process; console, result and per-layer gap views; the self-test and the doctor."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
