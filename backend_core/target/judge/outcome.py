"""The one place a target run's outcome is decided: from the UART and the simulator (`uart_outcome`,
`simulated_outcome`), with the exit status and the program (`run_outcome`), then against the two
references with the words for it (`classify_outcome`: the Verdict).

Outcomes (the same strings in the CLI, the GUI and the JSON):
- PASS: the target's outputs equal the lowered program's, run on the host, bit for bit (atol 0);
  `label` says "PASS, bit-exact" or "PASS with a quantisation difference" (lowered vs fake-quant,
  named and sized in output steps: that is the quantisation, not the target);
- FAIL: the target differs from the lowered program: the target computed something else than the
  program it was given (a target bug: kernel, runtime, memory); with --etdump, the first layer that
  differs, and since its inputs are bit-identical, the op whose target kernel disagrees with its host
  reference kernel;
  when the difference is exactly what a known host-vs-CMSIS-NN kernel difference gives (kernel_refs.py:
  the lowered program rerun with that op computed the target's way reproduces the target bit for bit),
  the FAIL says so (`known_difference`, label LABEL_KNOWN): not the user's model, not a target bug, but
  ExecuTorch's host reference and its target kernel disagreeing on that op (a bundle made before
  cmlens computed such ops the target's way; bundles cmlens makes now expect the target's values, so
  a correct target PASSes and the PASS names the op and both roundings, `known_difference`);
- FAULT, TIMEOUT: the firmware trapped / did not finish; NO RESULT: no TEST line; RAN: a plain .pte ran
  (nothing to compare with).
A tolerance the user asked for (--atol/--qtol) still reports whether the outputs were bit-exact."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from backend_core.target.judge.kernel_refs import OpMismatch
from backend_core.target.judge.references import FAKE_QUANT, LOWERED, References
from backend_core.target.judge.steps import OutputDifference, summary

LABEL_EXACT = "PASS, bit-exact"
LABEL_QDIFF = "PASS with a quantisation difference"
LABEL_TOLERANCE = "PASS within tolerance (not bit-exact)"
LABEL_KNOWN = "FAIL (known kernel/reference mismatch)"
FLOAT_ROUNDING_SNR_DB = 100.0


@dataclass
class LayerDifference:
    """The first layer (execution order) whose target output differs from the host's (--etdump)."""

    node_id: str | None
    target: str
    differing: int
    values: int
    max_abs: float
    max_steps: float | None = None
    dtype: str = ""
    snr_db: float | None = None        # signal to difference power; float32 rounding sits near 140 dB

    @property
    def float_rounding(self) -> bool:
        """A float layer that differs only as two float32 evaluations of one formula do (an FPU's fused
        multiply-add, another summation order): SNR ≥ 100 dB, where a wrong kernel reading or writing the
        wrong values sits far below."""
        return (self.max_steps is None and self.dtype.startswith(("torch.float", "torch.bfloat"))
                and self.snr_db is not None and self.snr_db >= FLOAT_ROUNDING_SNR_DB)

    def text(self) -> str:
        size = f"max {self.max_steps:.0f} step(s)" if self.max_steps is not None else f"max |d| {self.max_abs:.4g}"
        op = self.target.replace(".default", "")
        return f"{self.node_id} ({op}): {size} in {self.differing}/{self.values} values"


@dataclass
class Verdict:
    outcome: str                                 # PASS FAIL FAULT TIMEOUT NO RESULT RAN
    label: str                                   # the outcome in words (see LABEL_*)
    reference: str                               # what the expected outputs are (references.LOWERED, ...)
    exact: bool | None = None                    # target == reference bit for bit (None: not compared)
    target_vs_reference: list[OutputDifference] = field(default_factory=list)
    lowered_vs_fake_quant: list[OutputDifference] = field(default_factory=list)
    quantisation_difference: str = ""            # "max 1 step in 4/2048 values (GELU lookup table)"
    first_differing_layer: LayerDifference | None = None
    kernel_mismatches: list[str] = field(default_factory=list)   # per op: host kernel != target kernel
    tolerance: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)               # the verdict in sentences
    known_difference: bool = False     # FAIL explained bit for bit by a known host/CMSIS-NN kernel difference

    @property
    def passed(self) -> bool:
        return self.outcome in ("PASS", "RAN")

    def headline(self) -> str:
        """The first line of the CLI summary and the GUI's outcome text."""
        return self.label + (f": {self.lines[0]}" if self.lines else "")

    def to_dict(self) -> dict[str, Any]:
        f = self.first_differing_layer
        return {"outcome": self.outcome, "label": self.label, "reference": self.reference, "exact": self.exact,
                "target_vs_reference": [d.to_dict() for d in self.target_vs_reference],
                "lowered_vs_fake_quant": [d.to_dict() for d in self.lowered_vs_fake_quant],
                "quantisation_difference": self.quantisation_difference,
                "first_differing_layer": None if f is None else vars(f).copy(),
                "kernel_mismatches": list(self.kernel_mismatches), "tolerance": dict(self.tolerance),
                "lines": list(self.lines), "known_difference": self.known_difference}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Verdict":
        f = d.get("first_differing_layer")
        return Verdict(d["outcome"], d.get("label", d["outcome"]), d.get("reference", ""), d.get("exact"),
                       [OutputDifference.from_dict(x) for x in d.get("target_vs_reference", [])],
                       [OutputDifference.from_dict(x) for x in d.get("lowered_vs_fake_quant", [])],
                       d.get("quantisation_difference", ""), None if f is None else LayerDifference(**f),
                       list(d.get("kernel_mismatches", [])), dict(d.get("tolerance", {})), list(d.get("lines", [])),
                       bool(d.get("known_difference", False)))


def _reference_name(refs: References) -> str:
    if refs.expected_from == LOWERED:
        return "lowered program"
    if refs.expected_from == FAKE_QUANT:
        return "fake-quant model"
    return "bundle's expected outputs"


def _from_stats(max_abs: float | None, steps: Sequence[float | None]) -> list[OutputDifference]:
    """Without the target's printed outputs: one row from the runner's error stats (count unknown)."""
    if max_abs is None:
        return []
    step = max((s for s in steps if s), default=None)
    return [OutputDifference(0, 0, 0 if max_abs == 0 else -1, float(max_abs), step,
                             None if not step else max_abs / step)]


def _diff_text(diffs: Sequence[OutputDifference]) -> str:
    text = summary(diffs)
    return text.replace("in -1/0 values", "(count not reported: no printed outputs)")


def _first_layer(gaps: Any) -> LayerDifference | None:
    """From a firmware.gaps.GapReport (or its to_dict()): the first non-identical layer."""
    if gaps is None:
        return None
    layers = gaps.get("layers", []) if isinstance(gaps, dict) else [vars(g) for g in gaps.layers]
    for g in layers:
        if g.get("mismatched", 0):
            scale = g.get("scale")
            # gaps of an int tensor are in LSBs already (the Inspector compares raw integer values)
            steps = g.get("max_abs") if scale else None
            return LayerDifference(g.get("node_id"), g.get("target", ""), int(g.get("mismatched", 0)),
                                   int(g.get("numel", 0)), float(g.get("max_abs", 0.0)), steps,
                                   str(g.get("dtype", "")), g.get("snr_db"))
    return None


def uart_outcome(report: Any) -> str:
    """What the UART says (simulate.uart_records.UartReport): FAIL when a test failed (ExecuTorch's runner
    aborts after a FAIL, so a fault may follow), else FAULT when the firmware faulted, else PASS, or NO
    RESULT without TEST lines."""
    if report.passed is False:
        return "FAIL"
    if report.faults:
        return "FAULT"
    if report.passed is None:
        return "NO RESULT"
    return "PASS"


def simulated_outcome(sim: Any) -> str:
    """What the simulator and the UART say (simulate.simulator.SimResult): TIMEOUT, else uart_outcome."""
    return "TIMEOUT" if sim.timed_out else uart_outcome(sim.report)


def run_outcome(sim: Any, program_suffix: str | None = None) -> str:
    """A firmware run's outcome before its outputs are compared: a PASS whose firmware exited non-zero is a
    FAIL (every line said PASS but the firmware reported failure); a plain .pte (`program_suffix`) that
    ran to the end with no error lines RAN: it has no reference outputs to compare with."""
    outcome = simulated_outcome(sim)
    if outcome == "PASS" and sim.exit_code not in (0, None):
        return "FAIL"
    if (outcome == "NO RESULT" and sim.exit_code == 0 and not sim.report.errors and program_suffix == ".pte"):
        return "RAN"
    return outcome


def run_problem(sim: Any) -> str:
    """Why a run did not end normally, in words: the simulator's problem, or the runtime's abort when the
    board layer reported it as a fault (ExecuTorch's et_pal_abort traps)."""
    fatal = [e for e in sim.report.errors if e.startswith("F [")]
    if sim.report.faults and fatal:
        return (f"the runner aborted ({fatal[-1].split('] ', 1)[-1]}); ExecuTorch's et_pal_abort traps, "
                f"which the board layer reports as {sim.report.faults[0].kind}")
    return sim.problem


def classify_outcome(sim_outcome: str, references: References | None = None, *,
                     target_vs_reference: Sequence[OutputDifference] | None = None,
                     max_abs_error: float | None = None, atol: float = 0.0, rtol: float = 0.0,
                     gaps: Any = None, etdump: bool = False, problem: str = "",
                     target_vs_faithful: Sequence[OutputDifference] | None = None) -> Verdict:
    """The verdict of one run. `sim_outcome` is what the runner and simulator said (PASS / FAIL / FAULT /
    TIMEOUT / NO RESULT / RAN), `target_vs_reference` the target's outputs against the bundle's expected
    ones (from the printed outputs), `max_abs_error` the runner's error stats, `gaps` the per-layer gaps
    of an --etdump run, `target_vs_faithful` the target's outputs against the lowered program run with
    the known host/CMSIS-NN kernel differences computed the target's way (judge.py; None: not compared)."""
    if (sim_outcome == "PASS" and atol == 0 and rtol == 0
            and any(not d.identical for d in target_vs_reference or [])):
        sim_outcome = "FAIL"      # cannot happen with an exact runner check; never let a PASS hide a difference
    refs = references or References()
    name = _reference_name(refs)
    tol = {"atol": float(atol), "rtol": float(rtol)}
    diffs = list(target_vs_reference or []) or _from_stats(max_abs_error, refs.steps)
    fq = list(refs.vs_fake_quant)
    qtext = summary(fq) if fq and refs.quantisation_difference else ""
    if qtext and refs.causes:
        qtext += f" ({'; '.join(refs.causes)})"
    v = Verdict(sim_outcome, sim_outcome, refs.expected_from, None, diffs, fq, qtext, tolerance=tol)
    fq_line = refs.fake_quant_text() or ("no fake-quant comparison: cmlens did not make this bundle"
                                         if refs.expected_from != LOWERED else "")
    if sim_outcome == "PASS":
        _judge_pass(v, refs, name, diffs, tol, fq_line)
    elif sim_outcome == "FAIL":
        _judge_fail(v, refs, name, diffs, gaps, etdump, target_vs_faithful, fq_line)
    else:
        if problem:
            v.lines.append(problem)
        if fq_line and sim_outcome != "RAN":
            v.lines.append(fq_line)
    return v


def _judge_pass(v: Verdict, refs: References, name: str, diffs: list[OutputDifference], tol: dict[str, float],
                fq_line: str) -> None:
    """A PASS: bit for bit, within the tolerance given, or with a known host/CMSIS-NN kernel difference."""
    atol, rtol = tol["atol"], tol["rtol"]
    exact = all(d.identical for d in diffs) if diffs else None
    v.exact = True if (atol == 0 and rtol == 0) else exact
    if v.exact is False:
        v.label = LABEL_TOLERANCE
        v.lines.append(f"target vs {name}: {_diff_text(diffs)}, accepted by atol {atol:g} rtol {rtol:g}")
    else:
        v.label = LABEL_QDIFF if refs.quantisation_difference else LABEL_EXACT
        v.lines.append(f"target == {name} bit for bit")
        if v.exact is None:
            v.lines[-1] = f"target == {name} within atol {atol:g} rtol {rtol:g} (not shown to be bit-exact)"
        known = [OpMismatch.from_dict(m) for m in refs.kernel_mismatches] if refs.target_kernels else []
        if known:
            v.known_difference = True
            v.kernel_mismatches = [f"{m.op} ({m.node}): {m.differing}/{m.values} values by up to {m.max_steps} "
                                   f"step(s) on its own inputs, host reference vs CMSIS-NN" for m in known]
            v.lines.append("the lowered program's " + "; ".join(f"{m.node} ({m.op})" for m in known)
                           + " computed as the target's CMSIS-NN kernel does: "
                           + "; ".join(sorted({m.how for m in known}))
                           + ". ExecuTorch's host reference kernel differs there ("
                           + "; ".join(m.text() for m in known) + "): a known reference mismatch, "
                           "not your model and not the target")
    if fq_line:
        v.lines.append(fq_line)
    v.lines += [f"reference: {n}" for n in refs.notes]    # how the expected outputs were made
    if refs.expected_from != LOWERED:
        v.lines.append(f"the expected outputs are the {name}: PASS means equal to them, not to the lowered program")


def _judge_fail(v: Verdict, refs: References, name: str, diffs: list[OutputDifference], gaps: Any, etdump: bool,
                target_vs_faithful: Sequence[OutputDifference] | None, fq_line: str) -> None:
    """A FAIL, and why: a known reference mismatch, float rounding, or the target computing something else."""
    v.exact = False
    v.label = "FAIL"
    known = [OpMismatch.from_dict(m) for m in refs.kernel_mismatches] if refs.expected_from == LOWERED else []
    explained = bool(known and target_vs_faithful and all(d.identical for d in target_vs_faithful))
    where = "; ".join(f"{m.node} ({m.op})" for m in known)
    first = _first_layer(gaps)
    what = (f"target != {name}: {_diff_text(diffs)}" if diffs else f"target != {name}")
    if explained:
        v.known_difference = True
        v.label = LABEL_KNOWN
        what += f" at {where}: {'; '.join(sorted({m.how for m in known}))}: a known reference mismatch, not your model"
        v.kernel_mismatches = [f"{m.op} ({m.node}): {m.differing}/{m.values} values by up to {m.max_steps} "
                               f"step(s) on its own inputs, host reference vs CMSIS-NN" for m in known]
    elif refs.expected_from == LOWERED and first is not None and first.float_rounding:
        what += (": float rounding, not a target bug: the first layer that differs is a float one, by "
                 f"{first.snr_db:.0f} dB SNR (max |d| {first.max_abs:.2g}), as two float32 evaluations of one "
                 "formula differ (a fused multiply-add, another summation order); a value near a "
                 "quantisation boundary then lands one step apart. cmlens compiles the portable kernels with "
                 "-ffp-contract=off to round as the host does: libraries built otherwise (your own, "
                 "CMLENS_FULL_LIBRARIES=1) can still fuse")
    elif refs.expected_from == LOWERED:
        what += ": the target computed something other than the program it was given (a target bug)"
    else:
        what += (" (the expected outputs are not the lowered program's, so this may be quantisation, "
                 "not the target: lower the model with cmlens for a bit-exact reference)")
    v.lines.append(what)
    if explained:
        n = sum(d.values for d in target_vs_faithful or [])
        v.lines.append(f"the lowered program rerun on the host with {where} computed CMSIS-NN's way reproduces "
                       f"the target bit for bit ({n} values): the target is right, ExecuTorch's host reference "
                       f"kernel is not bit-exact with its CMSIS-NN kernel there")
    elif known:
        v.lines.append(f"{where} is known to differ from CMSIS-NN on the host ("
                       + "; ".join(m.text() for m in known) + "), but "
                       + ("the target differs beyond that" if target_vs_faithful is not None
                          else "the target's outputs were not printed, so that cannot explain it here"))
    if first is not None:
        v.first_differing_layer = first
        v.lines.append(f"first layer that differs (execution order): {first.text()}"
                       + (" (the known mismatch)" if explained and first.node_id in {m.node for m in known} else ""))
        if not explained and refs.expected_from == LOWERED and not first.float_rounding:
            v.kernel_mismatches.append(
                f"{first.target.replace('.default', '')} ({first.node_id}): the target's kernel and the host's "
                f"reference kernel disagree on bit-identical inputs ({first.differing}/{first.values} values)")
    elif gaps is not None:
        v.lines.append("every layer the ETDump recorded is bit-identical: the difference is after the last "
                       "recorded layer (output copy, bundle comparison)")
    elif not etdump and not explained:
        v.lines.append("run with --etdump for the first layer that differs")
    if fq_line:
        v.lines.append(fq_line)
    v.lines += [f"reference: {n}" for n in refs.notes]    # how the expected outputs were made
