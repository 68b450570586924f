"""The common tier: the vocabulary every other tier shares, importing nothing above it. Typed errors
(`errors`), CPU names (`cpus`) and the boards (`boards/`), the graph snapshot every stage is captured into
(`snapshot/`) with its diffs and node histories (`diff`, `provenance`), the finding record (`finding`), the
worker's line protocol (`protocol`), the one atomic file writer (`files`), stack versions and where the
kernels/ sources are."""
