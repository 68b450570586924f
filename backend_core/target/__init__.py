"""The target tier: a lowered program on a Cortex-M board. `toolchain/` finds the tools and the checkout,
`build/` builds ExecuTorch's libraries and the runner firmware, `simulate/` runs it on QEMU or the FVP,
`judge/` decides what the run means (outcome, bit-for-bit verdict, per-layer gaps), `memory/` and `profile/`
measure it, `export/` writes the firmware bundle, `doctor/` checks the machine. Nothing here lowers."""
