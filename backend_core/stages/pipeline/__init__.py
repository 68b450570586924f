"""The stepped lowering pipeline."""
from backend_core.stages.pipeline.stepped import (STAGE_EDGE, STAGE_EXPORT, STAGE_FINAL, STAGE_QUANTIZED, LoweringPipeline,
                     planned_stage_names)
from backend_core.stages.pipeline.stages import PipelineOptions, Stage

__all__ = ["LoweringPipeline", "PipelineOptions", "Stage", "planned_stage_names",
           "STAGE_EXPORT", "STAGE_QUANTIZED", "STAGE_EDGE", "STAGE_FINAL"]
