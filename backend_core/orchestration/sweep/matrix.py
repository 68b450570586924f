"""A sweep's matrix: models (zoo names, files, folders) × `--vary key=v1,v2` axes -> a list of Jobs.

Everything here is checked before any work starts: an unknown axis, a bad value or a model that does
not exist is a BadInputError (exit 2) naming it and the fix."""
from __future__ import annotations

import itertools
from typing import Any
from dataclasses import replace
from pathlib import Path

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, STEPS
from backend_core.orchestration.jobs.options import schedule_of
from backend_core.orchestration.jobs.spec import EvaluateOptions



def expand_models(items: list[str]) -> list[str]:
    """Zoo names and model files as given; a folder gives its *.py model files (sorted). Unknown names
    and missing files fail here, before anything runs."""
    from backend_core.stages.models import parse_model_source

    out: list[str] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            files = sorted(str(f) for f in p.glob("*.py") if not f.name.startswith("_"))
            files += sorted(str(f) for f in p.glob("*.pt2"))
            if not files:
                raise BadInputError(f"Folder {p} holds no model files (*.py, *.pt2).",
                                    "Point --models at a folder of model files, or name zoo models.")
            out.extend(files)
            continue
        parse_model_source(item)                              # BadInputError: unknown name, missing file
        out.append(item)
    if not out:
        raise BadInputError("No models to sweep.", "Name zoo models, model files or a folder.")
    return list(dict.fromkeys(out))


def build_jobs(models: list[str], axes: dict[str, list[object]], steps: tuple[str, ...],
               base: LowerRequest = LowerRequest(), run: RunOptions = RunOptions(),
               board: str | None = None, keep: tuple[str, ...] = ("graphs",),
               evaluate: EvaluateOptions = EvaluateOptions()) -> list[Job]:
    """One Job per model × combination of axis values, labelled `model · value · value`."""
    bad = [s for s in steps if s not in STEPS]
    if bad:
        raise BadInputError(f"Unknown step(s) {', '.join(bad)}.", f"Steps are: {', '.join(STEPS)}.")
    names = list(axes)
    jobs = []
    for model in models:
        for combo in itertools.product(*(axes[n] for n in names)) if names else [()]:
            values: dict[str, Any] = dict(zip(names, combo))
            low = replace(base, **{k: v for k, v in values.items() if k not in ("board", "schedule")})
            label = " · ".join([_model_label(model)] + [_label(k, v) for k, v in values.items()])
            schedule = schedule_of(values.get("schedule"))     # a schedule cell adds the schedule step
            jobs.append(Job(model, low, steps=(*steps, "schedule") if schedule else steps,
                            board=values.get("board", board), run=run, keep=keep, label=label, evaluate=evaluate,
                            **({"schedule": schedule} if schedule else {})))
    return jobs


def _model_label(model: str) -> str:
    """`ds_cnn` -> ds_cnn, `path/net.py` -> net, `cases.py:conv_relu` -> conv_relu (one file, many models)."""
    path, sep, name = model.rpartition(":")
    if sep and path.endswith(".py") and name:
        return name
    return Path(model).stem if Path(model).suffix else model


def _label(axis: str, value: object) -> str:
    if axis == "target":
        return str(value).replace("cortex-", "")
    if axis == "channels_last":
        return "channels-last" if value else "as given"
    if axis == "schedule":
        return "no schedule" if value == "none" else f"schedule {Path(str(value)).name}"
    return str(value)
