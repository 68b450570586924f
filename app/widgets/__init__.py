"""Small widgets and the theme shared by several feature packages."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
