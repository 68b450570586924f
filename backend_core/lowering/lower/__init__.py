"""Lowering a model source (or reading an artefact) into snapshots with fallback reasons and
pre-flight findings, cached: `lower()` is the one entry every job step, worker and test shares.
`verify` re-lowers modified copies to check the fixes the tool suggests (it composes the pipeline
with the fallback package, so it lives here, above both)."""
from backend_core.lowering.result import LoweringResult, supported_targets
from backend_core.lowering.lower.entry import StageCallback, lower

__all__ = ["LoweringResult", "StageCallback", "lower", "supported_targets"]
