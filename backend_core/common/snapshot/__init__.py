"""GraphSnapshot: one immutable, JSON-serialisable picture of the graph per stage, and its capture from FX graphs."""
