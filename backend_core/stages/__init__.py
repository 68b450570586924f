"""The stages tier: a model source through ExecuTorch's Cortex-M flow, one stage at a time, and why each op
fell back. `models/` resolves a source (zoo, file, .pt2) and its calibration; `pipeline/` runs float export ->
PT2E quantization -> edge -> one stage per CortexMPassManager pass, snapshotting each; `fallback/` explains
every op left on portable kernels in the user's terms and holds the rewrites the tool may make; `cache.py`
keys a lowering's result on everything that made it."""
