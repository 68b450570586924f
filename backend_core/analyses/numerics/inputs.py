"""Which samples a numerics run uses: the model's example inputs, N random samples spanning
their value range, or a folder of `.pt`/`.npy` files (loaded safely by the calibration
loader: `weights_only=True`, `allow_pickle=False`). All are put in the flow's layout."""
from __future__ import annotations

import os
from dataclasses import dataclass

from backend_core.common.errors import BadInputError


@dataclass(frozen=True)
class InputSpec:
    """Parsed `--inputs` value; cheap, validated before the 8 s ExecuTorch import."""

    kind: str            # "example" | "random" | "folder"
    count: int = 1       # for random
    folder: str = ""
    seed: int = 1        # not 0: the pipeline calibrates with seed 0, keep test data distinct

    def describe(self) -> str:
        if self.kind == "random":
            return f"{self.count} random samples (seed {self.seed})"
        if self.kind == "folder":
            return f"folder {self.folder}"
        return "example inputs"


def parse_inputs(value: str | int | None) -> InputSpec:
    """`None`/"example" → example inputs; "8" or 8 → 8 random samples; else a folder path."""
    if value is None or value == "" or value == "example":
        return InputSpec("example")
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        n = int(value)
        if n < 1 or n > 10_000:
            raise BadInputError(f"--inputs {n}: the number of random samples must be 1..10000.",
                                "Pass a small count such as --inputs 8, or a folder of samples.")
        return InputSpec("random", count=n)
    path = os.path.expanduser(str(value))
    if not os.path.exists(path):
        raise BadInputError(f"Inputs folder not found: {path}",
                            "Pass --inputs N for N random samples, or an existing folder of .pt/.npy "
                            "files (one sample per file, saved with torch.save or numpy.save).")
    if not os.path.isdir(path):
        raise BadInputError(f"--inputs {path} is a file, not a folder.",
                            "Put the sample file(s) in a folder and pass the folder.")
    return InputSpec("folder", folder=os.path.abspath(path))


def load_samples(spec: InputSpec, example_inputs: tuple, flow: str, channels_last: bool = False
                 ) -> list[tuple]:
    """The samples, each a tuple of tensors in the layout the lowered program expects: the example
    inputs' memory format, or channels-last with the --channels-last option."""
    from backend_core.stages.models.calibration import load_input_folder, random_samples
    from backend_core.stages.pipeline.stepped import to_layout

    if spec.kind == "random":
        samples = random_samples(example_inputs, spec.count, seed=spec.seed)
    elif spec.kind == "folder":
        samples = load_input_folder(spec.folder, example_inputs)
    else:
        samples = [tuple(example_inputs)]
    return [to_layout(tuple(s), channels_last, like=example_inputs) for s in samples]
