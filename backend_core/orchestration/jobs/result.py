"""What a job gave: one JSON-serialisable record per job (status, each step's section, the error with
its step, timings, files), plus the live objects of this process for callers that print them."""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

from backend_core.orchestration.jobs.spec import Job

RESULT_FORMAT = 1
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"


@dataclass
class JobResult:
    job: Job
    status: str = "running"                          # done / failed / cancelled
    steps: dict[str, Any] = field(default_factory=dict)   # step name -> its JSON section
    error: dict[str, Any] | None = None              # step, type, message, hint, detail, exit_code
    timings: dict[str, float] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    host: str = field(default_factory=socket.gethostname)
    # live objects (this process only; not serialised)
    lowering: Any = field(default=None, repr=False, compare=False)
    run: Any = field(default=None, repr=False, compare=False)
    preflight: Any = field(default=None, repr=False, compare=False)    # the check step's PreflightReport
    record: Any = field(default=None, repr=False, compare=False)       # keep "etrecord": the .bpte + ETRecord
    numerics: Any = field(default=None, repr=False, compare=False)     # the numerics step's NumericsResult
    numerics_inputs: Any = field(default=None, repr=False, compare=False)   # its samples (jobs/steps/numerics.py)
    # the run's board, checkout, simulator (jobs/target_run/plan.py)
    run_environment: Any = field(default=None, repr=False, compare=False)
    exception: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        """The CLI's exit status: 0 done, 1 the target run FAILed, 2 bad input, 3 a stage/build/run
        failure, 130 cancelled."""
        if self.status == CANCELLED:
            return 130
        if self.error:
            return int(self.error.get("exit_code", 3))
        for tool in ("selftest", "doctor"):      # the steps that run no model carry their own exit code
            if (self.steps.get(tool) or {}).get("exit_code"):
                return int(self.steps[tool]["exit_code"])
        run = self.steps.get("run")
        if run is not None and run.get("outcome") not in ("PASS", "RAN"):
            return 1 if run.get("outcome") == "FAIL" else 3
        return 0

    def raise_error(self) -> None:
        """Re-raise what stopped the job (the CLI prints it with its cause and fix)."""
        if self.exception is not None:
            raise self.exception

    def summary(self) -> dict[str, Any]:
        """The few numbers a sweep's matrix shows per cell (None where the step did not run)."""
        low = self.steps.get("lower") or {}
        mem = self.steps.get("memory") or {}
        run = self.steps.get("run") or {}
        prof = (run.get("profile") or {}) if run else {}
        fit = (mem.get("verdict") or {}) if mem else {}
        return {
            "status": self.status, "error": (self.error or {}).get("message"),
            "fallbacks": None if not low or low.get("fallbacks") is None else len(low["fallbacks"]),
            "arena_bytes": mem.get("arena_bytes"), "pte_bytes": mem.get("pte_bytes") or low.get("pte_bytes"),
            "schedule_total_ram_bytes": ((self.steps.get("schedule") or {}).get("chosen") or {}).get("total_ram_bytes"),
            "fits": fit.get("fits") if fit else None,
            "method_allocator_bytes": (mem.get("method_allocator") or {}).get("used") if mem else None,
            "outcome": run.get("outcome"), "instructions": prof.get("total") if prof else None,
            "estimated_ms": estimated_ms(run),        # the cycle estimate of the run's profile on its board
            "verdict": verdict_text(run.get("verdict")) if run else None,   # "PASS, bit-exact"
            "preflight_will_fail": None if "check" not in self.steps else sum(
                1 for f in self.steps["check"].get("preflight", []) if f.get("certainty") == "will fail"),
            **accuracy_summary(self.steps.get("evaluate")),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"format": RESULT_FORMAT, "job": self.job.to_dict(), "key": self.job.key(), "status": self.status,
                "exit_code": self.exit_code, "steps": self.steps, "error": self.error,
                "timings_s": {k: round(v, 3) for k, v in self.timings.items()}, "files": self.files,
                "host": self.host, "summary": self.summary()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "JobResult":
        return cls(Job.from_dict(d["job"]), d["status"], d.get("steps", {}), d.get("error"),
                   d.get("timings_s", {}), d.get("files", {}), d.get("host", ""))


def accuracy_summary(ev: dict[str, Any] | None) -> dict[str, Any]:
    """top-1 (%) of the lowered program and of float, and the flips, of an evaluate step (None: not run)."""
    models = (ev or {}).get("models") or {}

    def pct(k: str) -> float | None:
        v = (models.get(k) or {}).get("top1")
        return None if v is None else round(100.0 * v, 2)

    return {"top1": pct("lowered"), "float_top1": pct("float"),
            "flips": len(ev.get("flipped", [])) if ev and "flipped" in ev else None}


def verdict_text(verdict: dict[str, Any] | None) -> str | None:
    """A run's verdict in a table cell: "PASS, bit-exact" whenever the target equalled the lowered program
    bit for bit (also when the lowered program differs from the fake-quant model: that is the lowering's
    quantisation, not the target, and the verdict's lines say it), else the verdict's label."""
    if not verdict:
        return None
    if verdict.get("outcome") == "PASS" and verdict.get("exact") and verdict.get("label", "").startswith("PASS with a q"):
        return "PASS, bit-exact"
    return verdict.get("label") or verdict.get("outcome")


def estimated_ms(run: dict[str, Any] | None) -> float | None:
    """The kernels' estimated milliseconds of a run step's profile (None: no run, no profile or no estimate)."""
    e = (((run or {}).get("profile") or {}).get("estimate") or {})
    return e.get("ms")
