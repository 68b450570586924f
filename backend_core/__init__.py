"""CortexM Lens core: pure Python (no Qt). Loads models, lowers them stage by stage with
ExecuTorch's Cortex-M backend, snapshots every stage and explains every fallback."""
