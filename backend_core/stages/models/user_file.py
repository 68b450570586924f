"""Load a model from the user's Python file, as `python model.py` runs it (its folder first on sys.path,
so helpers and packages beside it import). This runs their code: callers only do it on an explicit user
action (a CLI argument, File > Open)."""
from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.stages.models.dependencies import LoadRecorder, search_path_text
from backend_core.stages.models.spec import LoadedModel, ModelSpec


def _user_frame(exc: BaseException, path: str) -> str:
    """'line N: code' of the deepest frame in the user's file, for the error message."""
    where = ""
    for fs in traceback.extract_tb(exc.__traceback__):
        if Path(fs.filename).resolve() == Path(path):
            where = f" at line {fs.lineno}: {fs.line}"
    return where


def _as_tuple(inputs: Any) -> tuple:
    if isinstance(inputs, tuple):
        return inputs
    if isinstance(inputs, list):
        return tuple(inputs)
    return (inputs,)


def _import_error(e: ModuleNotFoundError, path: str, rec: LoadRecorder, during: str) -> BadInputError:
    """Name the missing module, the line that imported it and the folders Python searched."""
    missing = e.name or str(e)
    where = search_path_text(rec.search_path, missing, rec.folder)
    top = missing.split(".")[0]
    at = _user_frame(e, path)
    for fs in traceback.extract_tb(e.__traceback__):       # the deepest line of the user's own files
        f = os.path.realpath(fs.filename)
        if f.startswith(rec.folder + os.sep) and f != os.path.realpath(path):
            at = f" at {os.path.relpath(f, rec.folder)} line {fs.lineno}: {fs.line}"
    return BadInputError(
        f"{Path(path).name} could not import {missing!r}{during}{at}: no module named "
        f"{missing!r} in {where}.",
        f"If {top} is your code, put {top}.py (or the {top}/ package) beside {Path(path).name} or add its "
        f"folder to PYTHONPATH; if it is a library, install it into this environment "
        f"({sys.executable} -m pip install {top}).", detail=traceback.format_exc())


def load_python_model(spec: ModelSpec) -> LoadedModel:
    """Import the file as `python model.py` would (its folder first on sys.path) and build the model,
    recording the files it imported and read (LoadedModel.dependencies)."""
    with LoadRecorder(spec.path) as rec:
        model, inputs, calib, module = _load(spec, rec)
    import torch

    path = spec.path
    if not isinstance(model, torch.nn.Module):
        raise BadInputError(f"The model from {path} is a {type(model).__name__}, not a torch.nn.Module.",
                            "Return an nn.Module instance from get_model().")
    # optional: labelled data for `cmlens evaluate` and the image preprocessing for --data folders
    eval_fn, pre_fn = getattr(module, "get_eval_data", None), getattr(module, "preprocess", None)
    return LoadedModel(spec.name, model.eval(), _as_tuple(inputs), spec, calibration_inputs=calib,
                       dependencies=rec.dependencies(), eval_data=eval_fn if callable(eval_fn) else None,
                       preprocess=pre_fn if callable(pre_fn) else None)


def _load(spec: ModelSpec, rec: LoadRecorder) -> tuple[Any, Any, list[tuple] | None, Any]:
    path = spec.path
    mod_name = f"cmlens_user_model_{abs(hash(path))}"
    try:
        s = importlib.util.spec_from_file_location(mod_name, path)
        if s is None or s.loader is None:
            raise BadInputError(f"Cannot import {path}.", "Is it a Python source file?")
        module = importlib.util.module_from_spec(s)
        sys.modules[mod_name] = module
        s.loader.exec_module(module)
    except BadInputError:
        raise
    except SyntaxError as e:
        raise BadInputError(f"{e.filename or path} has a syntax error at line {e.lineno}: {e.msg}.",
                            "Fix the file and load it again.", detail=traceback.format_exc()) from e
    except ModuleNotFoundError as e:
        raise _import_error(e, path, rec, "") from e
    except Exception as e:  # any error in user code is reported, not raised
        raise BadInputError(
            f"{path} raised {type(e).__name__} while being imported{_user_frame(e, path)}: {e}",
            "Fix the error in the model file (run it with python to see the full traceback).",
            detail=traceback.format_exc()) from e

    try:
        if spec.entry:
            fn = getattr(module, spec.entry, None)
            if not callable(fn):
                raise BadInputError(f"{path} has no callable named {spec.entry!r}.",
                                    f"Define def {spec.entry}(): return model, example_inputs")
            result = fn()
            if not (isinstance(result, tuple) and len(result) == 2):
                raise BadInputError(f"{spec.entry}() in {path} must return (model, example_inputs).",
                                    "Return a tuple: the nn.Module and a tuple of input tensors.")
            model, inputs = result
            return model, inputs, None, module
        missing = [n for n in ("get_model", "get_example_inputs") if not callable(getattr(module, n, None))]
        if missing:
            raise BadInputError(
                f"{path} does not define {' and '.join(m + '()' for m in missing)}.",
                "A model file defines get_model() returning an nn.Module and get_example_inputs() "
                "returning a tuple of tensors (optionally get_calibration_inputs()), or use "
                "file.py:NAME for a callable returning (model, example_inputs).")
        model = module.get_model()
        inputs = module.get_example_inputs()
        calib_fn = getattr(module, "get_calibration_inputs", None)
        calib = [_as_tuple(c) for c in calib_fn()] if callable(calib_fn) else None
        return model, inputs, calib, module
    except BadInputError:
        raise
    except ModuleNotFoundError as e:
        raise _import_error(e, path, rec, " while building the model") from e
    except Exception as e:
        raise BadInputError(
            f"Building the model from {path} raised {type(e).__name__}{_user_frame(e, path)}: {e}",
            "Fix the error in the model file.", detail=traceback.format_exc()) from e
