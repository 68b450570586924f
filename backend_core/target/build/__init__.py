"""Everything built for a board: the ExecuTorch libraries from the user's checkout (libraries.py, one
cmake step at a time: steps.py; their stamp: library_stamp.py; up to date by ninja: freshness.py), the
stock Arm runner per model (runner.py), the kernels/ firmware (kernels.py), the op check against the
checkout (ops.py), the debug buffer's size (debug_buffer.py), an MCU run's fit (board_fit.py) and the
runtime's size from a link probe (link_probe.py). Builds go under paths.cache_dir()."""
