"""Judge one finished target run: read what the target produced (printed outputs or out-<i>.bin),
compare it with the bundle's expected outputs in output steps, and classify (outcome.py).

Duck-typed on the run (run_result.ModelRunResult: .outcome, .sim.report, .files, .gaps, .problem), so
recorded runs and stand-ins are judged the same way."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from backend_core.target.judge.outcome import Verdict, classify_outcome
from backend_core.target.judge.references import References, faithful_outputs
from backend_core.target.judge.steps import OutputDifference
from backend_core.target.judge.target_outputs import printed_outputs, target_vs_expected


def _expected(bpte: Path) -> list[Any]:
    from backend_core.stages.pipeline.reference_check import expected_outputs

    try:
        return expected_outputs(Path(bpte).read_bytes())
    except OSError:
        return []


def _written_outputs(files: dict[str, Path], expected: Sequence[Any]) -> list[Any]:
    """out-<i>.bin of a semihosting run, read with the dtype of the expected output i."""
    import numpy as np

    out = []
    for i, e in enumerate(expected):
        p = files.get(f"out-{i}.bin")
        if p is None or not Path(p).is_file():
            return []
        out.append(np.frombuffer(Path(p).read_bytes(), dtype=np.asarray(e).dtype))
    return out


def _target_and_expected(run: Any, bpte: Path | None) -> tuple[list[Any], list[Any], bool]:
    """(the target's outputs, the bundle's expected ones, printed?): ([], [], True) when the run left neither."""
    if bpte is None or Path(bpte).suffix != ".bpte":
        return [], [], True
    expected = _expected(bpte)
    if not expected:
        return [], [], True
    written = _written_outputs(getattr(run, "files", {}) or {}, expected)
    if written:
        return written, expected, False
    printed = printed_outputs(run.sim.report.outputs)
    if len(printed) != len(expected):
        return [], [], True
    return printed, expected, True


def target_differences(run: Any, bpte: Path | None, steps: Sequence[float | None]) -> list[OutputDifference]:
    """The target's outputs against the bundle's expected ones, [] when the run left neither."""
    actual, expected, printed = _target_and_expected(run, bpte)
    return target_vs_expected(actual, expected, steps, printed=printed) if actual else []


def judge_run(run: Any, bpte: Path | None, references: References, steps: Sequence[float | None], *,
              atol: float, rtol: float, etdump: bool) -> Verdict:
    """The run's Verdict; `steps` are the output quantisation steps (pipeline.reference_check.output_steps)."""
    refs = references
    if not refs.steps and steps:
        refs = References(refs.expected_from, refs.vs_fake_quant, list(steps), refs.causes, refs.notes)
    stats = run.sim.report.error_stats
    actual, expected, printed = _target_and_expected(run, bpte)
    diffs = target_vs_expected(actual, expected, refs.steps or steps, printed=printed) if actual else []
    faithful = (target_vs_expected(actual, faithful_outputs(refs, expected), refs.steps or steps, printed=printed)
                if actual and refs.kernel_mismatches else None)
    outcome = run.outcome
    if outcome == "PASS" and diffs and any(not d.identical for d in diffs) and atol == 0 and rtol == 0:
        outcome = "FAIL"      # cannot happen with an exact runner check; never let a PASS hide a difference
    return classify_outcome(outcome, refs, target_vs_reference=diffs,
                            max_abs_error=stats[0].max_absolute_error if stats else None,
                            atol=atol, rtol=rtol, gaps=getattr(run, "gaps", None), etdump=etdump,
                            problem=getattr(run, "problem", ""), target_vs_faithful=faithful)
