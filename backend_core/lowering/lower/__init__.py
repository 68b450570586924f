"""Lowering a model source (or reading an artefact) into snapshots with fallback reasons and
pre-flight findings, cached: `lower()` is the one entry every job step, worker and test shares.
`verify` re-lowers modified copies to check the fixes the tool suggests (it composes the pipeline
with the fallback package, so it lives here, above both)."""
from backend_core.lowering.result import LoweringResult, supported_targets
from backend_core.lowering.lower.calls import LowerHooks, LowerOutputs, StageCallback
from backend_core.lowering.lower.entry import lower

__all__ = ["LowerHooks", "LoweringResult", "LowerOutputs", "StageCallback", "lower", "supported_targets"]
