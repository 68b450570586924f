"""The lowering tier: the one lowering entry (lower/), what a lowering returns (result.py), and the
readers that turn ExecuTorch's own artefacts into the same result (artefacts/). Importing the tier
imports nothing: artefacts/ stays free of torch."""
