"""The Run-on-target feature: build and run on QEMU / FVP through `cmlens run --protocol` in a child process; console, result and per-layer gap views."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
