"""Calibration inputs: the example inputs plus N random samples, or a folder of `.pt`/`.npy`
files loaded safely (`weights_only=True`, `allow_pickle=False`)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.stages.models.dependencies import Dependency, file_digest, folder_digest


def random_samples(example_inputs: tuple, n: int, seed: int = 0) -> list[tuple]:
    """N samples spanning the example inputs' value range (integer inputs are repeated)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    out: list[tuple] = []
    for _ in range(n):
        sample = []
        for x in example_inputs:
            if isinstance(x, torch.Tensor) and x.is_floating_point():
                lo, hi = float(x.min()), float(x.max())
                if hi <= lo:
                    lo, hi = lo - 1.0, lo + 1.0
                y = torch.rand(x.shape, generator=g) * (hi - lo) + lo
                sample.append(y.to(x.dtype))
            else:
                sample.append(x)
        out.append(tuple(sample))
    return out


def read_sample_file(path: Path) -> tuple:
    """One sample file (calibration, numerics inputs, evaluation data): a tensor or a tuple of tensors,
    loaded safely (no pickled objects)."""
    import numpy as np
    import torch

    try:
        if path.suffix == ".npy":
            data: Any = torch.from_numpy(np.load(path, allow_pickle=False))
        else:
            data = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as e:
        raise BadInputError(f"Cannot read input file {path}: {type(e).__name__}: {str(e)[:200]}",
                            "Inputs must be tensors saved with torch.save (.pt) or numpy.save (.npy, "
                            "no pickled objects).") from e
    if isinstance(data, torch.Tensor):
        return (data,)
    if isinstance(data, (list, tuple)) and data and all(isinstance(t, torch.Tensor) for t in data):
        return tuple(data)
    raise BadInputError(f"{path} holds a {type(data).__name__}, not a tensor or a tuple of tensors.",
                        "Save one sample per file: a tensor or a tuple of tensors.")


def load_input_folder(folder: str, example_inputs: tuple) -> list[tuple]:
    """Every `.pt`/`.npy` file of `folder`, sorted by name, checked against the example shapes."""
    p = Path(folder).expanduser()
    if not p.is_dir():
        raise BadInputError(f"Input folder not found: {p}", "Pass a folder of .pt or .npy files.")
    files = sorted(f for f in p.iterdir() if f.suffix in (".pt", ".npy"))
    if not files:
        raise BadInputError(f"{p} has no .pt or .npy files.",
                            "Put one sample per file there (torch.save or numpy.save).")
    samples = []
    for f in files:
        s = read_sample_file(f)
        if len(s) != len(example_inputs):
            raise BadInputError(f"{f.name} has {len(s)} tensors but the model takes {len(example_inputs)}.",
                                "Save a tuple with one tensor per model input.")
        for i, (t, ref) in enumerate(zip(s, example_inputs)):
            if tuple(t.shape) != tuple(ref.shape):
                raise BadInputError(
                    f"{f.name}: input {i} has shape {tuple(t.shape)}, the model expects {tuple(ref.shape)}.",
                    "Save inputs with the model's input shape (including the batch dimension).")
        samples.append(tuple(t.to(ref.dtype) for t, ref in zip(s, example_inputs)))
    return samples


def calibration_set(example_inputs: tuple, calib: str | int | None, user_samples: list[tuple] | None
                    ) -> list[tuple]:
    """The samples used to calibrate: example inputs first, then the folder / random / user ones.
    An explicit count N >= 1 (`--calib N`) means N random samples even when the model brings its own
    (a model file's get_calibration_inputs(), a trained zoo entry's training images): the user asked
    for it, e.g. to see what a poor calibration costs in accuracy (`cmlens evaluate --calib 1`).
    `random:N` is N random samples (the same as N); `model:N` the first N of the model's own calibration
    samples (the source and size axes of a calibration sweep: `--vary calib=random:8,model:8`)."""
    samples = [example_inputs]
    kind, n_text = split_calib(calib)
    if kind == "model":
        if not user_samples:
            raise BadInputError(f"calib={calib}: the model brings no calibration samples of its own.",
                                "Define get_calibration_inputs() in the model file (a trained zoo entry has its "
                                "training images), or calibrate on random:N or a folder.")
        if n_text is not None and int(n_text) > len(user_samples):
            raise BadInputError(f"calib={calib}: the model brings {len(user_samples)} calibration samples, not "
                                f"{n_text}.", f"Use model:{len(user_samples)} or fewer (model: all of them).")
        return samples + list(user_samples[:int(n_text) if n_text is not None else None])
    if kind == "random":
        assert n_text is not None               # random:N always has its N
        return samples + random_samples(example_inputs, int(n_text))
    if isinstance(calib, str) and not calib.isdigit():
        return samples + load_input_folder(calib, example_inputs)
    n = int(calib) if calib is not None else 8
    if user_samples and not (calib is not None and n >= 1):
        return samples + list(user_samples)
    return samples + random_samples(example_inputs, n)


CALIB_SPEC = re.compile(r"^(random|model):(\d+)$|^(model)$")


def split_calib(calib: str | int | None) -> tuple[str | None, str | None]:
    """("random", "8") for `random:8`, ("model", "8") for `model:8`, ("model", None) for `model`; (None, None)
    for a count, a folder or None."""
    m = CALIB_SPEC.match(calib) if isinstance(calib, str) else None
    if m is None:
        return None, None
    return (m.group(1), m.group(2)) if m.group(1) else ("model", None)


def input_folder_dependencies(calib: str | int | None) -> list[Dependency]:
    """The sample files of a calibration folder, for the result cache: the options name the folder,
    these name its content (an added, edited or deleted sample is a miss that says so)."""
    if not isinstance(calib, str) or calib.isdigit() or split_calib(calib)[0]:
        return []
    p = Path(calib).expanduser()
    if not p.is_dir():
        return []
    listing = Dependency(str(p.resolve()), f"{p.name}/", "folder", folder_digest(p))
    return [listing] + [Dependency(str(f.resolve()), f"{p.name}/{f.name}", "data", file_digest(f))
                        for f in sorted(p.iterdir()) if f.suffix in (".pt", ".npy")]
