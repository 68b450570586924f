"""The profile feature: per-op cost of a target run (bars of top ops, fallback islands, kernel kinds,
modules), the graph coloured by cost and the inspector's cost lines. Reads the `profile` of
`cmlens run --json F`; imports no other feature package (the shell wires it with signals)."""
from app.runtime import qt_compat  # noqa: F401  (PySide6 6.12 emit() refcount fix)
