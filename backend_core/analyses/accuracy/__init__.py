"""Accuracy on the user's data (issue 25): float vs PT2E fake-quant vs the lowered program on the same
labelled samples, ST Edge AI's output metrics, and for every prediction int8 flipped, the layer where
that sample's error left the model's usual error (the per-layer numerics capture, per sample).

Layering: this package runs programs a lowering already made (`EvalPrograms.from_lowering`); it never
lowers (only backend_core.orchestration.jobs does, in the `evaluate` step). Importing it does not import torch."""
from backend_core.analyses.accuracy.data import EvalSample, EvalSet, load_eval_set
from backend_core.analyses.accuracy.evaluate import EvalPrograms, evaluate

__all__ = ["EvalSample", "EvalSet", "load_eval_set", "EvalPrograms", "evaluate"]
