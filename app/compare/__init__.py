"""N lowerings side by side (issue 17 part 2): one Job per side in the job worker (the Jobs `cmlens compare` submits), drawn as
one graph pane per side with selection synced by the matched rows."""
from .dialog import CompareDialog, side_text
from .view import CompareView

__all__ = ["CompareDialog", "CompareView", "side_text"]
