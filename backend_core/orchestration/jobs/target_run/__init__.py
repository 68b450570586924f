"""The run step: a lowered program on a target, in order plan -> program -> sizing -> build -> simulate ->
judge (`run_on_target`), and evaluate on target. Each stage is one module; the feature packages of the
target tier do the work."""
