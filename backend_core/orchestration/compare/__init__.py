"""Compare N lowerings (model + options, saved `--json` reports, artefacts, baselines): ops matched by
what the user wrote, per-op rows, summary deltas, and the CI gate on a baseline.

- sides.py     what a side is, how it is typed (`SOURCE@opts`, `--vary`) and loaded (the one lowering call)
- facts.py     one side as plain data (SideFacts: op groups, memory, profile, numerics); a baseline holds one
- extract.py   a lowering report -> SideFacts (user-op groups, fused activations, bytes, counts, SQNR)
- matching.py  groups of N sides -> rows (exact / line moved / module+op; weak: order, op, shape)
- rows.py      per-op cells and what changed against side 0; qparams.py the tolerance
- deltas.py    fallbacks added/removed, memory, instructions, SQNR at the output
- result.py    Comparison and `compare_to_dict` (docs/json-format.md); text.py, html.py its outputs
- baseline.py  the versioned baseline file; gate.py the checks of `cmlens gate`
Nothing here imports ExecuTorch until a side has to be lowered or read (its Job: sides.side_job)."""
from backend_core.orchestration.compare.facts import OpGroup, SideFacts
from backend_core.orchestration.compare.qparams import DEFAULT_RTOL
from backend_core.orchestration.compare.result import COMPARE_FORMAT, COMPARE_VERSION, Comparison, compare_facts, compare_to_dict

__all__ = ["COMPARE_FORMAT", "COMPARE_VERSION", "Comparison", "DEFAULT_RTOL", "OpGroup", "SideFacts",
           "compare_facts", "compare_to_dict"]
