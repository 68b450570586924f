"""The application shell: main window, docks, menus (as data), status bar, settings. It sits above the feature packages and wires
them together with signals."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
