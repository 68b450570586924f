"""One grammar for a job's options typed as text, used by every face: `key=value` (a compare side's
`ds_cnn@target=m4,int16`, the window's controls), bare values (`m4`, `int16`, `channels-last`) and
`--vary key=v1,v2` (sweeps and compare). Each value is parsed once, into what the Job holds; a bad one
is a BadInputError (exit 2) naming it and the fix."""
from __future__ import annotations

import re
from typing import Any

from backend_core.common.cpus import normalise_target
from backend_core.common.errors import BadInputError

LOWER_KEYS = ("target", "flow", "activations", "channels_last", "calib", "rewrites")   # LowerRequest's fields
AXES = LOWER_KEYS + ("board", "schedule")                                 # what a sweep varies
TRUE = {"1", "true", "yes", "on", "channels-last", "channels_last", "cl"}
FALSE = {"0", "false", "no", "off", "as-given", "as_given", "nchw", "no-channels-last"}
ALIASES = {"channels-last": "channels_last", "cl": "channels_last", "act": "activations", "cpu": "target",
           "rewrite": "rewrites"}


def canonical_key(key: str) -> str:
    key = key.strip().lower()
    return ALIASES.get(key, key).replace("-", "_")


def parse_value(key: str, text: str) -> Any:
    """The value of option `key` (canonical) given as text."""
    v = text.strip()
    if not v:
        raise BadInputError(f"{key}: an empty value.", f"Give a value, e.g. {key}=...")
    if key == "target":
        return normalise_target(v)                     # UnsupportedTargetError (exit 2) lists the CPUs
    if key == "flow":
        if v not in ("legacy", "explicit"):
            raise BadInputError(f"Unknown flow {v!r}.", "Use flow=legacy or flow=explicit.")
        return v
    if key == "activations":
        if v not in ("int8", "int16"):
            raise BadInputError(f"Unknown activation type {v!r}.", "Use activations=int8 or activations=int16.")
        return v
    if key == "channels_last":
        if v.lower() in TRUE:
            return True
        if v.lower() in FALSE:
            return False
        raise BadInputError(f"channels_last={v!r} is not yes or no.", "Use channels_last=yes|no.")
    if key == "calib":
        return parse_calib(v)
    if key == "rewrites":                 # rewrites=rnn-cells (several joined by +), none: the model as given
        from backend_core.stages.fallback.rnn_cells import REWRITES

        names = () if v.lower() in ("none", "as-given") else tuple(dict.fromkeys(v.lower().split("+")))
        bad = [n for n in names if n not in REWRITES]
        if bad:
            raise BadInputError(f"Unknown rewrite {bad[0]!r}.", f"Use rewrites={'|'.join(REWRITES)} or rewrites=none.")
        return names
    if key == "board":
        from backend_core.common.boards.specs import board_named

        return board_named(v).name                      # BadInputError lists the boards
    if key == "schedule":
        return parse_schedule(v)
    raise BadInputError(f"Unknown option {key!r}.", f"Options: {', '.join(AXES)}.")


def parse_schedule(v: str) -> str:
    """A sweep's schedule value: none (the plain program), auto, fit (the cell's board), fit:BOARD or a
    schedule FILE, each with an
    optional +int8 (the int8 input, --input-dtype int8). Checked now: an unknown board or a file that is
    not a schedule is exit 2 before any job runs."""
    spec, plus, dtype = v.partition("+")
    if plus and dtype != "int8":
        raise BadInputError(f"schedule={v}: {dtype!r} is not int8.", "Write schedule=auto+int8 (or auto, none, ...).")
    if spec.lower() == "none":
        if plus:
            raise BadInputError(f"schedule={v}: the int8 input is a schedule option.", "Write schedule=auto+int8.")
        return "none"
    if spec.startswith("fit:"):
        from backend_core.common.boards.specs import board_named

        spec = "fit:" + board_named(spec[4:]).name
    elif spec not in ("auto", "fit"):                    # fit: the cell's board
        from backend_core.analyses.schedule.schedule_file import load_schedule

        load_schedule(spec)
    return spec + plus + dtype


def schedule_of(value: str | None) -> Any:
    """The ScheduleOptions of a sweep's schedule value (None: none)."""
    if value in (None, "none"):
        return None
    from backend_core.orchestration.jobs.spec import ScheduleOptions

    spec, _, dtype = value.partition("+")
    return ScheduleOptions(spec=spec, input_dtype=dtype or "float32")


def parse_calib(v: str) -> Any:
    """N or random:N (N random samples: one value, N), model:N / model (the first N / all of the model's own
    calibration samples), or a folder of .pt/.npy samples."""
    if v.isdigit():
        n = int(v)
    else:
        m = re.match(r"^(random|model):(.*)$", v)
        if m is None:
            return v                                         # a folder (checked when it is read)
        if not m.group(2).isdigit() or int(m.group(2)) < 1:
            raise BadInputError(f"calib={v}: {m.group(2)!r} is not a sample count of 1 or more.",
                                f"Write calib={m.group(1)}:8 (or N, random:N, model:N, model, a folder).")
        if m.group(1) == "model":
            return f"model:{int(m.group(2))}"
        n = int(m.group(2))
    return n


def parse_bare(token: str) -> tuple[str, Any]:
    """A value without its key: int8/int16, legacy/explicit, channels-last/as-given, or a CPU."""
    t = token.strip().lower()
    if t in ("int8", "int16"):
        return "activations", t
    if t in ("legacy", "explicit"):
        return "flow", t
    if t == "rnn-cells":
        return "rewrites", ("rnn-cells",)
    if t in TRUE - {"1", "true", "yes", "on"}:
        return "channels_last", True
    if t in FALSE - {"0", "false", "no", "off"}:
        return "channels_last", False
    try:
        return "target", parse_value("target", t)
    except BadInputError:
        if re.match(r"^(cortex-)?m\d", t):
            raise
        raise BadInputError(f"Unknown option {token!r}.",
                            "A bare option is a CPU (m4, cortex-m55), int8/int16, legacy/explicit, channels-last, "
                            "as-given or rnn-cells; otherwise write key=value.") from None


def parse_vary(texts: list[str], keys: tuple[str, ...] = AXES, *, at_least: int = 1) -> dict[str, list[Any]]:
    """`["target=m4,m55", "activations=int8,int16"]` -> {"target": [...], "activations": [...]}: the
    `--vary` of sweeps (`keys` AXES) and of compare (LOWER_KEYS, `at_least` 2 values)."""
    axes: dict[str, list[Any]] = {}
    for text in texts:
        key, sep, values = text.partition("=")
        if not sep:
            raise BadInputError(f"--vary {text!r} has no '='.", "Write --vary key=v1,v2 (e.g. --vary target=m4,m55).")
        axis = canonical_key(key)
        if axis not in keys:
            raise BadInputError(f"--vary: unknown axis {key.strip()!r}.", f"Axes: {', '.join(keys)}.")
        if axis in axes:
            raise BadInputError(f"--vary {axis} is given twice.", "Give each axis once, its values comma-separated.")
        vals = list(dict.fromkeys(parse_value(axis, v) for v in values.split(",")))
        if len(vals) < at_least:
            words = {1: "one value", 2: "two values"}.get(at_least, f"{at_least} values")
            raise BadInputError(f"--vary {text!r} gives fewer than {words}.", f"e.g. --vary {axis}=a,b")
        axes[axis] = vals
    return axes
