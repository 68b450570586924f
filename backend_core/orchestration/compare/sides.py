"""What a side of a compare is, how it is typed, and how it is loaded.

A side is one of
  - a lowering: a model source (zoo name, file.py[:NAME], .pt2) and options;
  - a saved `cmlens lower --json` report;
  - an artefact ExecuTorch wrote (.pte, .bpte, .etrecord), read back;
  - a baseline (`cmlens compare --baseline-out`, `cmlens gate --write-baseline`).

Typed as `SOURCE[@OPT,OPT...]`: an OPT is `key=value` (target, flow, activations, channels_last,
calib, profile=RUN.json, numerics=NUM.json, label) or a bare value naming itself (`m4`, `int16`,
`explicit`, `channels-last`, `as-given`). Options given once for all sides (`--target m55`) are the
defaults; `--vary target=m4,m55` makes one side per value. So one model on two CPUs is
`ds_cnn --vary target=m4,m55` (or `ds_cnn@m4 ds_cnn@m55`), two files under one option set
`a.py b.py --target m55`, two saved results `r1.json r2.json`."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.options import LOWER_KEYS, canonical_key, parse_bare, parse_value, parse_vary
from backend_core.orchestration.compare.facts import SideFacts

LOWERING, REPORT, ARTEFACT, BASELINE = "lowering", "report", "artefact", "baseline"
OPTION_KEYS = LOWER_KEYS
DEFAULT_OPTIONS: dict[str, Any] = {"target": "cortex-m55", "flow": "legacy", "activations": "int8", "rewrites": (),
                                   "channels_last": False, "calib": None}


@dataclass
class SideSpec:
    text: str                                  # as typed
    source: str                                # model source or file path
    kind: str = LOWERING
    options: dict[str, Any] = field(default_factory=dict)   # only OPTION_KEYS
    profile: str | None = None                 # a `cmlens run --profile --json F` result to lay over it
    numerics: str | None = None                # a `cmlens numerics --json` result to lay over it
    label: str | None = None


@dataclass
class Side:
    spec: SideSpec
    facts: SideFacts
    report: dict[str, Any] | None = None       # the full lowering report (None for a baseline)


def _option(key: str, value: str) -> tuple[str, Any]:
    """A side option: a lowering option in the jobs' one grammar, or what only a side has."""
    key = canonical_key(key)
    if key in ("profile", "numerics", "label"):
        return key, value.strip()
    if key not in OPTION_KEYS:
        raise BadInputError(f"Unknown side option {key!r}.",
                            "Side options: target, flow, activations, channels_last, calib, profile, numerics, label "
                            "(e.g. ds_cnn@target=m4,activations=int16 or ds_cnn@m4,int16).")
    return key, parse_value(key, value)


def _kind_of(path: str) -> str:
    p = Path(path)
    if p.suffix == ".json":
        if not p.is_file():
            raise BadInputError(f"File not found: {p}", "Check the path.")
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise BadInputError(f"{p} is not readable JSON ({e}).", "Give a `cmlens lower --json` report "
                                "or a baseline written by `cmlens gate --write-baseline`.") from None
        from backend_core.orchestration.compare.baseline import BASELINE_FORMAT

        if isinstance(data, dict) and data.get("format") == BASELINE_FORMAT:
            return BASELINE
        if isinstance(data, dict) and "stages" in data:
            return REPORT
        what = ("a `cmlens numerics --json` result" if isinstance(data, dict) and "layers" in data else
                "a `cmlens run --json F` result" if isinstance(data, dict) and "profile" in data else
                "not a lowering report")
        raise BadInputError(f"{p} is {what}: it has no graph to compare.",
                            "Compare `cmlens lower --json` reports; lay a run or numerics result over one with "
                            "SIDE@profile=RUN.json or SIDE@numerics=NUM.json.")
    from backend_core.stages.models import parse_model_source

    return ARTEFACT if parse_model_source(path).kind == "artefact" else LOWERING


def parse_side(text: str, defaults: dict[str, Any] | None = None) -> SideSpec:
    """`SOURCE[@OPT,...]` -> SideSpec (BadInputError names the bad part)."""
    source, opts = text, ""
    if "@" in text and not Path(text).exists():
        source, _, opts = text.partition("@")       # paths in the options (profile=dir/run.json) are fine
    spec = SideSpec(text=text, source=source, options=dict(defaults or {}))
    for tok in (t for t in opts.split(",") if t.strip()):
        k, v = _option(*tok.split("=", 1)) if "=" in tok else parse_bare(tok)
        if k in OPTION_KEYS:
            spec.options[k] = v
        else:
            setattr(spec, k, v)
    spec.kind = _kind_of(source)
    if spec.kind == LOWERING:
        spec.options = {**DEFAULT_OPTIONS, **spec.options}
    elif set(spec.options) - set(defaults or {}):
        raise BadInputError(f"{text}: lowering options apply to a model source, not to a {spec.kind}.",
                            "A saved report or an artefact was lowered already; give the model source to lower it "
                            "with other options.")
    for f in (spec.profile, spec.numerics):
        if f and not Path(f).is_file():
            raise BadInputError(f"File not found: {f}", "Check the path given to profile= / numerics=.")
    return spec


def expand_vary(specs: list[SideSpec], vary: list[str]) -> list[SideSpec]:
    """`--vary key=v1,v2`: each side once per value (several --vary multiply)."""
    for key, values in parse_vary(vary, OPTION_KEYS, at_least=2).items():
        parsed = [(key, v) for v in values]
        out: list[SideSpec] = []
        for s in specs:
            if s.kind != LOWERING:
                raise BadInputError(f"--vary applies to lowerings; {s.source} is a {s.kind}.",
                                    "Give a model source (zoo name, .py, .pt2) to vary its options.")
            out.extend(replace(s, options={**s.options, k: val}) for k, val in parsed)
        specs = out
    return specs


def specs_from_words(words: list[str]) -> list[SideSpec]:
    """The sides of `cmlens compare SIDE... [--vary KEY=V1,V2]...` as the window's dialog writes them (the
    sides typed in full, SIDE@OPT,...): the CLI's grammar, read by the same functions."""
    texts, vary, rest = [], [], list(words)
    while rest:
        w = rest.pop(0)
        if w == "--vary" and rest:
            vary.append(rest.pop(0))
        elif w.startswith("--vary="):
            vary.append(w.split("=", 1)[1])
        elif w.startswith("-"):
            raise BadInputError(f"{w}: the window's compare takes sides and --vary only.",
                                "Put options on a side (ds_cnn@target=m4,int16) or use `cmlens compare` in a terminal.")
        else:
            texts.append(w)
    if len(texts) < 2 and not vary:
        raise BadInputError("compare needs two sides or more.", "Give a second source or vary one: --vary target=m4,m55.")
    return expand_vary([parse_side(t) for t in texts], vary)


def _names(specs: list[SideSpec]) -> list[str]:
    """File names, with as many parent folders as it takes to tell equal names apart (v1/net.py)."""
    def parts(s: SideSpec) -> list[str]:
        if s.kind == LOWERING and "/" not in s.source and "\\" not in s.source:
            return [s.source]
        return list(Path(s.source).expanduser().resolve().parts)
    all_parts = [parts(s) for s in specs]
    out = []
    for i, ps in enumerate(all_parts):
        n = 1
        while n < len(ps) and any(j != i and q[-n:] == ps[-n:] and q != ps for j, q in enumerate(all_parts)):
            n += 1
        out.append("/".join(ps[-n:]))
    return out


def auto_labels(specs: list[SideSpec]) -> list[str]:
    """The model name plus the options that differ between the sides (`ds_cnn (cortex-m4)`)."""
    varying = [k for k in OPTION_KEYS if len({repr(s.options.get(k)) for s in specs if s.kind == LOWERING}) > 1]
    labels = []
    for s, name in zip(specs, _names(specs)):
        if s.label:
            labels.append(s.label)
            continue
        parts = []
        if s.kind == LOWERING:
            for k in varying:
                v = s.options.get(k)
                if k == "channels_last":
                    parts.append("channels-last" if v else "as-given")
                elif k == "rewrites":
                    parts.append("+".join(v) if v else "as written")
                else:
                    parts.append(str(v))
        labels.append(f"{name} ({', '.join(parts)})" if parts else name)
    dup = {lab for lab in labels if labels.count(lab) > 1}
    return [f"{lab} #{i + 1}" if lab in dup else lab for i, lab in enumerate(labels)]


def side_job(spec: SideSpec, *, use_cache: bool = True, numerics_samples: int = 0, accuracy: Any = None) -> Any:
    """The Job that makes a side (a lowering, or an artefact read), or None for a saved report or a baseline
    (nothing to run). One Job per side, the one every face submits (the CLI on its executor, the window in its
    job worker): its lower + memory steps give the `cmlens lower --json` report with graphs, `numerics_samples`
    adds the numerics step on the same lowering (a side is lowered once), `accuracy` (EvaluateOptions) the
    evaluate step."""
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.spec import NumericsOptions

    if spec.kind not in (LOWERING, ARTEFACT):
        return None
    o = {**DEFAULT_OPTIONS, **(spec.options if spec.kind == LOWERING else {})}
    lowering = spec.kind == LOWERING
    steps = ["lower", "memory"]
    extra: dict[str, Any] = {}
    if lowering and numerics_samples and spec.numerics is None:
        steps.append("numerics")
        extra["numerics"] = NumericsOptions(inputs=numerics_samples)
    if lowering and accuracy is not None:
        steps.append("evaluate")
        extra["evaluate"] = accuracy
    return Job(spec.source, LowerRequest(target=o["target"], flow=o["flow"], activations=o["activations"],
                                         channels_last=bool(o["channels_last"]), calib=o["calib"], use_cache=use_cache,
                                         rewrites=tuple(o.get("rewrites") or ())),
               steps=tuple(steps), keep=("graphs",), label=spec.text, **extra)


def report_of_result(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the side's report with its memory and evaluate sections, its numerics) from a JobResult's JSON; a
    side whose job failed raises that error with its cause and fix."""
    from backend_core.common.errors import CmlensError

    steps = row.get("steps") or {}
    report, err = steps.get("lower"), row.get("error")
    if report is None or err is not None:
        err = err or {"message": "the side's job gave no lowering report", "exit_code": 3}
        exc = CmlensError(str(err.get("message")), str(err.get("hint") or ""), detail=str(err.get("detail") or ""))
        exc.exit_code = int(err.get("exit_code") or 3)
        raise exc
    report = dict(report)
    for section in ("memory", "evaluate"):
        if steps.get(section):
            report[section] = steps[section]
    return report, steps.get("numerics")


def side_from_result(spec: SideSpec, label: str, row: dict[str, Any] | None) -> Side:
    """A side from its Job's result (None for a saved report or a baseline: read here), with its overlays."""
    from backend_core.orchestration.compare.extract import facts_from_report

    profile = _profile_of(spec.profile) if spec.profile else None
    numerics = _read_json(spec.numerics, "numerics result") if spec.numerics else None
    if spec.kind == BASELINE:
        from backend_core.orchestration.compare.baseline import read_baseline

        facts = read_baseline(spec.source)
        facts.label = label
        return Side(spec, facts, None)
    if row is None:
        report = _read_json(spec.source, "lowering report")
    else:
        report, job_numerics = report_of_result(row)
        numerics = numerics or job_numerics
    return Side(spec, facts_from_report(report, label=label, kind=spec.kind, profile=profile, numerics=numerics), report)


def _read_json(path: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise BadInputError(f"Cannot read {what} {path}: {e}", "Give the JSON file cmlens wrote.") from None
    if not isinstance(data, dict):
        raise BadInputError(f"{path} is not a {what}.", "Give the JSON file cmlens wrote.")
    return data


def _profile_of(path: str) -> dict[str, Any]:
    data = _read_json(path, "profile")
    prof = data.get("profile") if "ops" not in data else data
    if not prof:
        raise BadInputError(f"{path} holds no profile.", "Write one with `cmlens run MODEL --profile --json F`.")
    return prof


def load_side(spec: SideSpec, label: str, *, use_cache: bool = True, numerics_samples: int = 0,
              on_status: Callable[[str], None] | None = None, verbose: bool = False,
              accuracy: Any = None) -> Side:
    """One side here, in this process (its Job on the in-process road). `on_status` hears one line per side
    (and the pipeline's own lines with `verbose`)."""
    from backend_core.orchestration.jobs import execute_job

    job = side_job(spec, use_cache=use_cache, numerics_samples=numerics_samples, accuracy=accuracy)
    if job is None:
        return side_from_result(spec, label, None)
    if on_status:
        on_status(f"{label}: {'reading' if spec.kind == ARTEFACT else 'lowering'} {spec.source}"
                  + (f", numerics on {numerics_samples} random inputs" if "numerics" in job.steps else "")
                  + (", evaluating on labelled data" if "evaluate" in job.steps else ""))
    res = execute_job(job, (lambda kind, data: on_status(data["text"]) if kind == "status" else None)
                  if on_status and verbose else None)
    return side_from_result(spec, label, res.to_dict())
