"""Why each compute node of the final graph stayed on portable kernels."""
from backend_core.stages.fallback.reasons import CATEGORIES, FallbackContext, explain_fallbacks

__all__ = ["CATEGORIES", "FallbackContext", "explain_fallbacks"]
