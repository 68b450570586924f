"""Per-layer numerics on the host: float vs PT2E fake-quant vs the lowered Cortex-M program,
and whether each runnable pass changed the numbers. Pure Python (torch is imported lazily by
the functions that run programs; results.py needs neither torch nor Qt)."""
from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LABELS, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT,
                      PAIR_LOWERED_VS_FQ, PAIRS, SQNR_CAP_DB, Histogram, LayerResult, Metrics,
                      NumericsResult, OutputResult, StageCheck)

__all__ = ["NumericsResult", "LayerResult", "OutputResult", "StageCheck", "Metrics", "Histogram",
           "PAIRS", "PAIR_LABELS", "PAIR_LOCAL", "PAIR_LOWERED_VS_FQ", "PAIR_LOWERED_VS_FLOAT",
           "PAIR_FQ_VS_FLOAT", "SQNR_CAP_DB", "numerics_of", "samples_for", "analyze",
           "parse_inputs"]


def __getattr__(name: str):  # lazy: importing the package must not import torch
    if name in ("numerics_of", "samples_for"):
        from backend_core.analyses.numerics import run
        return getattr(run, name)
    if name == "analyze":
        from backend_core.analyses.numerics.analyze import analyze
        return analyze
    if name == "parse_inputs":
        from backend_core.analyses.numerics.inputs import parse_inputs
        return parse_inputs
    raise AttributeError(name)
