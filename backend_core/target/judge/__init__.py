"""What a target run means: its outcome and verdict against two references, the lowered program run on
the host (the expected outputs: PASS means bit-exact) and the PT2E fake-quant model (the quantisation
difference, reported beside it in output steps); per-layer gaps from the runner's ETDump (gaps.py,
gaps_inspector.py); the run's result record (run_result.py). Plain data and numpy; no torch at import,
no Qt."""
from backend_core.target.judge.outcome import (LABEL_EXACT, LABEL_QDIFF, LABEL_TOLERANCE, LayerDifference, Verdict,
                                               classify_outcome)
from backend_core.target.judge.references import FAKE_QUANT, LOWERED, REFERENCES_BLOB, UNKNOWN, References, references_from_bundle
from backend_core.target.judge.steps import OutputDifference, compare, compare_all, summary

__all__ = ["Verdict", "LayerDifference", "classify_outcome", "LABEL_EXACT", "LABEL_QDIFF", "LABEL_TOLERANCE",
           "References", "references_from_bundle", "LOWERED", "FAKE_QUANT", "UNKNOWN", "REFERENCES_BLOB",
           "OutputDifference", "compare", "compare_all", "summary"]
