"""The graph feature: the graph pane (toolbar, compare split), its QGraphicsView/scene/items, navigation, heat overlay and image
export. Reads snapshots through app.lowering's ViewState."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
