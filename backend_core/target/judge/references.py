"""What a bundle's expected outputs are, and how far they are from the PT2E fake-quant model.

A target run is judged against ONE reference: the lowered program run on the host (the final edge
program, whose cortex_m ops have Python reference kernels). The target runs the same integer program,
so a correct target matches it bit for bit and PASS means atol 0. The fake-quant model is a second,
different program (float ops on a simulated int8 grid): its distance to the lowered program is the
quantisation difference, reported beside the verdict in output steps, never folded into a tolerance.

Measured (issue 16): gelu_conv's lowered program differs from fake-quant in 4/2048 values (the GELU
lookup table), mv2 by up to 11 steps, mv3 by 2; with fake-quant references all three FAILed on a
correct target."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend_core.target.judge.steps import OutputDifference, summary

LOWERED = "lowered program (host)"        # expected outputs = final edge program run on the host
FAKE_QUANT = "fake-quant model (host)"    # the old bundles: PT2E converted model
UNKNOWN = "unknown"                       # a ready-made .bpte: cmlens did not make its outputs

REFERENCES_BLOB = "references.json"       # beside model.bpte in a lowering's blobs / a run's work dir


@dataclass
class References:
    """How the expected outputs of one bundle were made, and the fake-quant comparison."""

    expected_from: str = UNKNOWN
    vs_fake_quant: list[OutputDifference] = field(default_factory=list)
    steps: list[float | None] = field(default_factory=list)     # quantisation step of each output
    causes: list[str] = field(default_factory=list)             # layers that introduce the difference
    notes: list[str] = field(default_factory=list)
    # kernel_refs.py: nodes whose host reference kernel differs from the target's CMSIS-NN kernel on their
    # own inputs (OpMismatch dicts), and the outputs of the lowered program run the target's way, stored
    # where they differ from the expected ones ({"output": i, "index": [...], "value": [...]})
    kernel_mismatches: list[dict] = field(default_factory=list)
    target_faithful: list[dict] = field(default_factory=list)
    # True: the expected outputs ARE the lowered program run the target's way (those known ops computed
    # as CMSIS-NN does), so a correct target PASSes bit for bit and the runner's own check agrees
    target_kernels: bool = False

    @property
    def exact_reference(self) -> bool:
        """True when the expected outputs are what a correct target computes bit for bit."""
        return self.expected_from == LOWERED

    @property
    def quantisation_difference(self) -> bool:
        return any(not d.identical for d in self.vs_fake_quant)

    def fake_quant_text(self) -> str:
        """"lowered vs fake-quant: max 1 step in 4/2048 values (GELU lookup table)"; "" when unknown."""
        if not self.vs_fake_quant:
            return ""
        text = f"lowered vs fake-quant: {summary(self.vs_fake_quant)}"
        if self.causes and self.quantisation_difference:
            text += f" ({'; '.join(self.causes)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"expected_from": self.expected_from,
                "vs_fake_quant": [d.to_dict() for d in self.vs_fake_quant],
                "steps": list(self.steps), "causes": list(self.causes), "notes": list(self.notes),
                "kernel_mismatches": list(self.kernel_mismatches), "target_faithful": list(self.target_faithful),
                "target_kernels": self.target_kernels}

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> "References":
        if not d:
            return References()
        return References(d.get("expected_from", UNKNOWN),
                          [OutputDifference.from_dict(x) for x in d.get("vs_fake_quant", [])],
                          list(d.get("steps", [])), list(d.get("causes", [])), list(d.get("notes", [])),
                          list(d.get("kernel_mismatches", [])), list(d.get("target_faithful", [])),
                          bool(d.get("target_kernels", False)))

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), indent=1).encode()

    @staticmethod
    def from_json(data: bytes | str | None) -> "References":
        if not data:
            return References()
        try:
            return References.from_dict(json.loads(data))
        except (ValueError, TypeError, KeyError):
            return References(notes=["the references record could not be read"])


def references_from_bundle(bundle: Any, causes: list[str] | None = None) -> References:
    """References of a bundle made by pipeline.program_files.bundle_program: expected = lowered program,
    compared with the fake-quant outputs in each output's quantisation step."""
    from backend_core.target.judge.steps import compare_all

    fq = compare_all(bundle.lowered, bundle.fake_quant, bundle.steps) if bundle.fake_quant else []
    notes = [] if bundle.fake_quant else ["no fake-quant model was run: no quantisation difference reported"]
    return References(LOWERED, fq, list(bundle.steps), list(causes or []), notes)


def faithful_outputs(refs: References, expected: list[Any]) -> list[Any]:
    """The expected outputs with the target-faithful values patched in (kernel_refs.py): what a correct
    target computes when a host reference kernel is known to differ from its CMSIS-NN kernel."""
    import numpy as np

    out = [np.array(e, dtype=np.float64).ravel() for e in expected]
    for patch in refs.target_faithful:
        i = int(patch["output"])
        if i < len(out):
            out[i][np.asarray(patch["index"], dtype=np.int64)] = np.asarray(patch["value"], dtype=np.float64)
    return out


def beside(bpte: Path) -> Path:
    """Where the references record of `<name>.bpte` is kept: `<name>.references.json` next to it (a
    bundle file has no room for it; `cmlens run` and `cmlens lower --bpte` write it)."""
    return Path(bpte).with_name(Path(bpte).stem + ".references.json")


def read_beside(bpte: Path) -> References:
    """The record next to `bpte`, or References(UNKNOWN) when there is none: a .bpte made elsewhere
    (its expected outputs may be a fake-quant model's)."""
    p = beside(bpte)
    if not p.is_file():
        return References(notes=[f"no {p.name} beside the bundle: the origin of its expected outputs is unknown"])
    return References.from_json(p.read_bytes())
