"""Cortex-M target strings, known without importing ExecuTorch (the GUI needs the list at start)."""
from __future__ import annotations

from backend_core.common.errors import BadInputError

# Mirrors executorch.backends.cortex_m.target_config.CortexM (checked by a test).
CPUS: tuple[str, ...] = ("M0", "M0PLUS", "M3", "M4", "M7", "M23", "M33", "M35P", "M55", "M85")
TARGETS: tuple[str, ...] = tuple("cortex-m" + c[1:].lower() for c in CPUS)
DEFAULT_TARGET = "cortex-m55"

# The CMSIS-NN kernel family each CPU resolves to (SCALAR < DSP < MVE).
ISA = {
    "cortex-m0": "SCALAR", "cortex-m0plus": "SCALAR", "cortex-m3": "SCALAR", "cortex-m23": "SCALAR",
    "cortex-m4": "DSP", "cortex-m7": "DSP", "cortex-m33": "DSP", "cortex-m35p": "DSP",
    "cortex-m55": "MVE", "cortex-m85": "MVE",
}


def normalise_target(target: str) -> str:
    """Accept `cortex-m55`, `M55`, `m55`; raise a BadInputError listing the valid ones."""
    t = target.strip().lower()
    if not t.startswith("cortex-"):
        t = "cortex-" + t
    if t not in TARGETS:
        raise BadInputError(
            f"Unknown target {target!r}.",
            "Use one of: " + ", ".join(TARGETS) + ".",
        )
    return t


def target_config(target: str):
    """Build ExecuTorch's CortexMTargetConfig (imports ExecuTorch: call from workers only)."""
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig

    return CortexMTargetConfig.from_target_string(normalise_target(target))
