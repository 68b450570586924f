"""Worker processes the GUI starts (`python -m backend_core.orchestration.workers.<name>`): ExecuTorch runs here,
never in the GUI process. They speak backend_core.common.protocol on stdout."""
