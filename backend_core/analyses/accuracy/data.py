"""Labelled evaluation data in: a model's own `get_eval_data()` (a model file's function, a zoo entry's
held-out split), or a folder the user points at with `--data DIR`:

* tensors: `*.npy` / `*.pt` files (one sample each) and `labels.csv` (`file,label`; the label is a class
  index, or the name of a `.npy`/`.pt` file in the folder holding a target tensor, for regression or an
  autoencoder's reconstruction);
* images, one sub-folder per class (the ImageFolder layout; classes sorted by name give the indices),
  read with Pillow and turned into the model's input by the model file's `preprocess(image)` when it
  defines one, else resized to the input's height and width, grey or RGB by its channels, scaled to [0, 1].

Every sample is checked against the model's example input (shape, dtype) and put in its layout, and a
bad one is a BadInputError that names the file and what to do: a wrong sample must not turn into a
silently wrong accuracy. Runs in the process that loaded the model (the user's code runs there)."""
from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from backend_core.common.errors import BadInputError
from backend_core.stages.models.calibration import read_sample_file

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".pgm", ".tif", ".tiff", ".webp")
TENSOR_SUFFIXES = (".npy", ".pt")


@dataclass
class EvalSample:
    name: str          # what the user reads: "eval#17", "img_004.npy", "3/img_004.png"
    inputs: tuple      # tensors in the model's layout (like its example inputs)
    label: Any = None  # int class, a target tensor, or None (then only agreement with float is measured)


@dataclass
class EvalSet:
    samples: list[EvalSample]
    source: str                          # "get_eval_data() of model.py", "folder D (12 .npy + labels.csv)"
    classes: list[str] | None = None     # class names of an image folder (index = label)
    warnings: list[str] = field(default_factory=list)

    @property
    def label_kind(self) -> str:
        """"class" (every label an int), "tensor" (every label a tensor), "none" (no labels)."""
        labels = [s.label for s in self.samples]
        if labels and all(isinstance(x, int) for x in labels):
            return "class"
        if labels and all(hasattr(x, "dtype") for x in labels):
            return "tensor"
        return "none"


def load_eval_set(model: Any, example_inputs: tuple, data_dir: str | None = None, *,
                  limit: int | None = None, calibration: list[tuple] | None = None) -> EvalSet:
    """The evaluation samples of `model` (a LoadedModel): from `data_dir` when given, else the model's
    get_eval_data(). `limit` keeps the first N. `calibration` (the samples the lowering calibrated on)
    adds a warning naming every evaluation sample that is also a calibration sample."""
    if data_dir:
        es = _from_folder(Path(data_dir).expanduser(), example_inputs, getattr(model, "preprocess", None), limit)
    elif getattr(model, "eval_data", None) is not None:
        es = _from_model(model, example_inputs, limit)
    else:
        where = model.spec.path or model.name
        raise BadInputError(
            f"No evaluation data for {model.name}: {Path(where).name} defines no get_eval_data() and no --data "
            "folder was given.",
            "Pass --data DIR (*.npy/*.pt + labels.csv, or images in one sub-folder per class), or define "
            "get_eval_data() in the model file, yielding (inputs, label) pairs.")
    if calibration:
        es.warnings += overlap_warnings(es.samples, calibration)
    return es


# -- the model's own data --------------------------------------------------------------------------
def _from_model(model: Any, example_inputs: tuple, limit: int | None) -> EvalSet:
    import torch

    origin = Path(model.spec.path).name if model.spec.path else f"zoo entry {model.name}"
    what = f"get_eval_data() of {origin}"
    samples: list[EvalSample] = []
    try:
        for i, item in enumerate(model.eval_data()):
            if limit is not None and i >= limit:
                break
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise BadInputError(f"{what}: item {i} is a {type(item).__name__}, not an (inputs, label) pair.",
                                    "Yield (inputs, label): inputs a tensor or a tuple of tensors, label a class "
                                    "index, a target tensor, or None.")
            inputs, label = item
            name = f"eval#{i}"
            samples.append(EvalSample(name, check_inputs(_as_tuple(inputs), example_inputs, f"{what}, {name}"),
                                      _label(label, f"{what}, {name}", torch)))
    except BadInputError:
        raise
    except Exception as e:  # the user's code raised: report it, with where
        raise BadInputError(f"{what} raised {type(e).__name__}: {str(e)[:300]}",
                            "Fix get_eval_data() in the model file (run it with python to see the traceback).") from e
    if not samples:
        raise BadInputError(f"{what} yielded no samples.", "Yield at least one (inputs, label) pair.")
    return EvalSet(samples, what)


def _label(label: Any, where: str, torch: Any) -> Any:
    if label is None or isinstance(label, bool):
        return None if label is None else int(label)
    if isinstance(label, int):
        return label
    if isinstance(label, torch.Tensor):
        if label.numel() == 1 and not label.is_floating_point():
            return int(label.reshape(-1)[0])
        return label.detach()
    try:
        import numpy as np

        if isinstance(label, np.integer):
            return int(label)
        if isinstance(label, np.ndarray):
            return _label(torch.from_numpy(label), where, torch)
    except ImportError:
        pass
    raise BadInputError(f"{where}: the label is a {type(label).__name__}.",
                        "A label is a class index (int), a target tensor, or None.")


# -- a folder --------------------------------------------------------------------------------------
def folder_layout(folder: str | Path) -> str:
    """"tensors" or "images": the layout of a --data folder, checked without torch (the CLI calls it before
    the 8 s import, so an empty folder or a missing label fails in a second); BadInputError otherwise."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise BadInputError(f"--data {folder}: no such folder.",
                            "Pass a folder of *.npy/*.pt samples with labels.csv, or of images in one "
                            "sub-folder per class.")
    if (folder / "labels.csv").is_file():
        _unlabelled_check(folder, _read_labels(folder / "labels.csv"))
        return "tensors"
    if any(d.is_dir() and not d.name.startswith(".") for d in folder.iterdir()):
        return "images"
    tensors = [f.name for f in folder.iterdir() if f.suffix in TENSOR_SUFFIXES]
    if tensors:
        raise BadInputError(f"{folder} has {len(tensors)} sample file(s) but no labels.csv.",
                            f"Add {folder / 'labels.csv'} with one line per sample: file,label "
                            f"(e.g. {sorted(tensors)[0]},3).")
    raise BadInputError(f"{folder} is empty: no labels.csv with *.npy/*.pt samples and no class sub-folders.",
                        "Put one sample per .npy/.pt file there with labels.csv (file,label), or images in one "
                        "sub-folder per class (e.g. 0/a.png, 1/b.png).")


def _from_folder(folder: Path, example_inputs: tuple, preprocess: Any, limit: int | None) -> EvalSet:
    if folder_layout(folder) == "tensors":
        return _tensor_folder(folder, example_inputs, limit)
    classes = sorted(d.name for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    return _image_folder(folder, classes, example_inputs, preprocess, limit)


def _tensor_folder(folder: Path, example_inputs: tuple, limit: int | None) -> EvalSet:
    rows = _read_labels(folder / "labels.csv")
    samples = []
    for name, value in rows[:limit] if limit is not None else rows:
        path = folder / name
        if not path.is_file():
            raise BadInputError(f"{folder / 'labels.csv'} names {name}, which is not in {folder}.",
                                "Fix the file name in labels.csv or add the file.")
        inputs = check_inputs(read_sample_file(path), example_inputs, str(path))
        samples.append(EvalSample(name, inputs, _csv_label(value, name, folder)))
    return EvalSet(samples, f"folder {folder} ({len(samples)} samples + labels.csv)")


def _unlabelled_check(folder: Path, rows: list[tuple[str, str]]) -> None:
    listed = {name for name, _ in rows}
    unlabelled = sorted(f.name for f in folder.iterdir() if f.suffix in TENSOR_SUFFIXES and f.name not in listed
                        and not _is_target_file(f.name, rows))
    if unlabelled:
        raise BadInputError(f"{folder / 'labels.csv'} has no label for {', '.join(unlabelled[:5])}"
                            f"{' …' if len(unlabelled) > 5 else ''} ({len(unlabelled)} file(s)).",
                            "Add a line file,label for each sample file, or move the file out of the folder.")


def _read_labels(path: Path) -> list[tuple[str, str]]:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInputError(f"Cannot read {path}: {e}", "labels.csv is a text file: file,label per line.") from e
    rows: list[tuple[str, str]] = []
    for i, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if i == 1 and row[0].strip().lower() in ("file", "filename", "name", "sample"):
            continue                                    # a header line
        if len(row) < 2 or not row[1].strip():
            raise BadInputError(f"{path} line {i}: no label for {row[0].strip()!r}.",
                                "Each line is file,label (a class index, or a .npy/.pt file holding the target).")
        rows.append((row[0].strip(), row[1].strip()))
    if not rows:
        raise BadInputError(f"{path} lists no samples.", "Add one line per sample: file,label.")
    return rows


def _is_target_file(name: str, rows: list[tuple[str, str]]) -> bool:
    return any(v == name for _, v in rows)


def _csv_label(value: str, name: str, folder: Path) -> Any:
    if value.lstrip("-").isdigit():
        return int(value)
    if value.endswith(TENSOR_SUFFIXES):
        path = folder / value
        if not path.is_file():
            raise BadInputError(f"{folder / 'labels.csv'}: the target of {name}, {value}, is not in {folder}.",
                                "Add the target tensor file, or give a class index.")
        t = read_sample_file(path)
        if len(t) != 1:
            raise BadInputError(f"{path} holds {len(t)} tensors; a target is one tensor.", "Save one tensor.")
        return t[0]
    raise BadInputError(f"{folder / 'labels.csv'}: the label of {name} is {value!r}, neither a class index nor a "
                        ".npy/.pt target file.", "Write an integer class index, or the name of a target tensor file.")


def _image_folder(folder: Path, classes: list[str], example_inputs: tuple, preprocess: Any,
                  limit: int | None) -> EvalSet:
    files = [(c, f) for i, c in enumerate(classes) for f in sorted((folder / c).iterdir())
             if f.is_file() and not f.name.startswith(".")]
    if not files:
        raise BadInputError(f"{folder}: the class folders {', '.join(classes[:5])} hold no files.",
                            "Put the images of each class in its sub-folder (e.g. 3/img_001.png).")
    other = [f"{c}/{f.name}" for c, f in files if f.suffix.lower() not in IMAGE_SUFFIXES]
    if other:
        raise BadInputError(f"{folder}: {', '.join(other[:3])} {'is' if len(other) == 1 else 'are'} not an image "
                            f"({len(other)} file(s)).", f"Keep only images ({', '.join(IMAGE_SUFFIXES)}) in the "
                            "class folders.")
    empty = [c for c in classes if not any(fc == c for fc, _ in files)]
    samples = []
    for c, f in files[:limit] if limit is not None else files:
        name = f"{c}/{f.name}"
        img = _open_image(f)
        if preprocess is not None:
            try:
                x = preprocess(img)
            except Exception as e:
                raise BadInputError(f"preprocess() raised {type(e).__name__} on {f}: {str(e)[:200]}",
                                    "Fix preprocess(image) in the model file: it takes a PIL image and returns "
                                    "the model's input tensor(s).") from e
        else:
            x = default_preprocess(img, example_inputs)
        samples.append(EvalSample(name, check_inputs(_as_tuple(x), example_inputs, str(f)), classes.index(c)))
    es = EvalSet(samples, f"image folder {folder} ({len(classes)} classes, "
                 f"{'preprocess() of the model file' if preprocess else 'default preprocessing'})", classes=classes)
    if empty:
        es.warnings.append(f"class folder(s) {', '.join(empty)} in {folder} hold no images")
    return es


def _open_image(path: Path) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            return im.copy()
    except (UnidentifiedImageError, OSError) as e:
        raise BadInputError(f"Cannot read image {path}: {type(e).__name__}: {str(e)[:200]}",
                            "Replace or remove the file; Pillow must be able to open every image.") from e


def default_preprocess(img: Any, example_inputs: tuple) -> Any:
    """An image as the model's only input: resized to its H x W, grey (1 channel) or RGB (3), [0, 1]."""
    import numpy as np
    import torch

    if len(example_inputs) != 1 or example_inputs[0].dim() != 4 or example_inputs[0].shape[1] not in (1, 3):
        raise BadInputError(f"The model's input is {[tuple(x.shape) for x in example_inputs]}, not one image "
                            "tensor (1 x C x H x W with C = 1 or 3): images cannot be fed to it as they are.",
                            "Define preprocess(image) in the model file, returning the input tensor(s).")
    _, c, h, w = example_inputs[0].shape
    im = img.convert("L" if c == 1 else "RGB")
    if im.size != (w, h):
        im = im.resize((w, h))
    a = np.asarray(im, dtype=np.float32) / 255.0
    t = torch.from_numpy(a.copy())
    t = t[None, None] if c == 1 else t.permute(2, 0, 1)[None]
    return t.to(example_inputs[0].dtype)


# -- checks ----------------------------------------------------------------------------------------
def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check_inputs(sample: tuple, example_inputs: tuple, where: str) -> tuple:
    """`sample` in the example inputs' shape, dtype and memory format; BadInputError naming `where`.
    A sample saved without the batch dimension of 1 gets it; float64 becomes the model's float type."""
    import torch

    from backend_core.stages.pipeline.stepped import to_layout

    if len(sample) != len(example_inputs):
        raise BadInputError(f"{where}: {len(sample)} tensor(s), the model takes {len(example_inputs)}.",
                            "Give one tensor per model input, in order.")
    out = []
    for i, (t, ref) in enumerate(zip(sample, example_inputs)):
        if not isinstance(t, torch.Tensor):
            try:
                import numpy as np

                if isinstance(t, np.ndarray):
                    t = torch.from_numpy(t)
            except ImportError:
                pass
        if not isinstance(t, torch.Tensor):
            raise BadInputError(f"{where}: input {i} is a {type(t).__name__}, not a tensor.",
                                "Give tensors (torch or numpy).")
        if tuple(t.shape) != tuple(ref.shape) and (1,) + tuple(t.shape) == tuple(ref.shape):
            t = t.unsqueeze(0)
        if tuple(t.shape) != tuple(ref.shape):
            raise BadInputError(f"{where}: input {i} has shape {tuple(t.shape)}, the model takes {tuple(ref.shape)}.",
                                "Save samples with the model's input shape (the batch dimension of 1 may be left out).")
        if t.is_floating_point() != ref.is_floating_point() or (t.dtype == torch.bool) != (ref.dtype == torch.bool):
            hint = (f"Convert the data to {ref.dtype} as the model's preprocessing does (e.g. uint8 images / 255)"
                    if ref.is_floating_point() else f"Save the data as {ref.dtype}.")
            raise BadInputError(f"{where}: input {i} is {t.dtype}, the model takes {ref.dtype}.", hint + ".")
        out.append(t.to(ref.dtype))
    return to_layout(tuple(out), like=example_inputs)


def sample_digest(sample: tuple) -> str:
    """Content hash of a sample's tensors (values, shape, dtype; not the memory layout)."""
    h = hashlib.sha1()
    for t in sample:
        if hasattr(t, "detach"):
            c = t.detach().contiguous()
            h.update(str((tuple(c.shape), str(c.dtype))).encode())
            h.update(c.numpy().tobytes())
    return h.hexdigest()


def overlap_warnings(samples: Iterable[EvalSample], calibration: list[tuple]) -> list[str]:
    """One warning naming the evaluation samples that are also calibration samples: accuracy measured on
    the data the quantizer's ranges were fitted to is optimistic."""
    calib = {sample_digest(tuple(c)) for c in calibration}
    both = [s.name for s in samples if sample_digest(s.inputs) in calib]
    if not both:
        return []
    return [f"{len(both)} evaluation sample(s) are also calibration samples: {', '.join(both[:8])}"
            f"{' …' if len(both) > 8 else ''}. Accuracy on them is optimistic: calibrate (--calib) and evaluate "
            "(--data / get_eval_data) on separate samples."]
