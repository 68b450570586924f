"""N lowerings side by side (issue 17 part 2): a `cmlens compare` run in a child process, drawn as one
graph pane per side with selection synced by the matched rows."""
from .dialog import CompareDialog, side_text
from .view import CompareView

__all__ = ["CompareDialog", "CompareView", "side_text"]
