"""What this machine can do for the target flow: `cmlens doctor` (machine.py: tools, checkout, built
libraries, each missing piece with the command that installs it) and `cmlens selftest` (selftest.py:
the kernels/ self-test firmware built and run on a simulator)."""
