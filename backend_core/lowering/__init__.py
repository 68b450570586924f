"""The lowering tier: the one lowering entry and what it returns. `lower/` holds `lower()` (cached, the
`--keep-going` rounds, verify), `result.py` the `LoweringResult`, and `artefacts/` the readers that turn what
ExecuTorch's own flow wrote (.pte, .bpte, .etrecord, .etdump) into the same result. Importing the tier
imports nothing: artefacts/ stays free of torch."""
