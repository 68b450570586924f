"""The external tools of the target flow and the user's ExecuTorch checkout: finding them with their
versions (tools, checkout), running them streamed and cancellable (process), and locking a tree two
builds must not share (locks). No Qt, no ExecuTorch import."""
