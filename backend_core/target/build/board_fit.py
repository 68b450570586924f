"""A `--board MCU` run's fit: the memory report and its verdict for the model on the MCU's sizes before
any build (DoesNotFitError, exit 2), the sized Board the runner links into, the verdict's lines, the
linker's overflow counts beside the verdict when the link fails, and after the run the prediction
beside the linked ELF."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.common.boards.sized import link_overflow, qemu_base, sized_board
from backend_core.common.boards.table import Board
from backend_core.target.build.paths import cache_dir


class DoesNotFitError(BadInputError):
    """The fit verdict says the firmware does not fit the board: stopped before the build (exit 2)."""

    def __init__(self, report: dict[str, Any]) -> None:
        v, b = report["verdict"], report["board"]
        without = "" if report.get("runtime") else " (before the runtime around it, which is not measured for this CPU)"
        super().__init__(f"{report.get('model', 'The model')} does not fit {b['name']}{without}: "
                         + "; ".join(v["problems"]) + ".",
                         "The same verdict as `cmlens memory MODEL --board " + b["name"] + "`: pick a board with "
                         "more memory, or shrink the model (the suggestions there).")
        self.report = report


def plan_board_run(model: Path, spec: Any, out_root: Path | None = None, *, ops: list[str],
                   etdump: bool = False, refuse: bool = True, on_status: Any = None,
                   base: Board | None = None) -> tuple[Board, dict[str, Any]]:
    """The sized Board and the memory report (with its verdict) for running `model` (.pte/.bpte) with
    `spec`'s sizes; DoesNotFitError before any build when the verdict says it does not fit. The
    runner's pools are then the verdict's own figures: report["pools"] = {"method": B, "temp": B}."""
    from backend_core.target.memory.plan import program_bytes
    from backend_core.target.memory.report import analyze_memory, attach_board, attach_runtime
    from backend_core.target.build.link_probe import runtime_for

    if etdump:
        raise BadInputError("--etdump does not go with --board: its debug buffer (2 MiB by default) is not "
                            "part of the firmware the verdict sizes.", "Drop --etdump, or run without --board.")
    base = base or qemu_base(spec.core)      # the QEMU board of the MCU's core (boards.resolve.RunBoard)
    data = model.read_bytes()
    rep = analyze_memory(program_bytes(data) if model.suffix == ".bpte" else data, None, target=base.cpu,
                         bundled_inputs=model.suffix == ".bpte")
    rep["model"] = model.stem
    attach_runtime(rep, runtime_for(base.cpu, ops, etdump_bytes=rep["etdump_bytes"], on_status=on_status))
    attach_board(rep, spec)
    if rep.get("runtime") is None and not rep["verdict"]["fits"] and refuse:
        raise DoesNotFitError(rep)       # it does not fit even without the runtime (the verdict notes it)
    if rep.get("runtime") is None:
        raise BadInputError(f"No measurement of the runtime for {base.cpu}: the verdict would leave it out.",
                            f"Build the libraries once (`cmlens run MODEL --target {base.cpu}`), then retry.")
    if not rep["verdict"]["fits"] and refuse:
        raise DoesNotFitError(rep)
    need = {n["name"]: n["bytes"] for n in rep["verdict"]["needs"]}
    rt = rep["runtime"]
    board = sized_board(spec, rep["verdict"], out_root if out_root is not None else cache_dir() / "boards",
                        stack=rt["stack"], heap=rt["heap"], base=base)
    rep["pools"] = {"method": need["method allocator pool"], "temp": need["temp allocator pool"]}
    return board, rep


def verdict_lines(rep: dict[str, Any], base: Board | None = None) -> list[str]:
    """The fit verdict a `--board` run prints before it builds (the lines of `cmlens memory`)."""
    from backend_core.target.memory.fit import kib

    v, b = rep["verdict"], rep["board"]
    out = [f"fit: {b['name']} ({kib(b['ram_bytes'])} RAM, {kib(b['flash_bytes'])} flash), linked into those sizes "
           f"on QEMU {(base or qemu_base(b['core'])).machine}"]
    for n in v["needs"]:
        out.append(f"  {n['kind']:5} {kib(n['bytes']):>12}  {n['name']:30} -> {n['region'] or 'DOES NOT FIT'}")
    out.append("fit: FITS, " + f"{kib(v['ram_free_bytes'])} RAM free, {kib(v['flash_free_bytes'] or 0)} flash free"
               if v["fits"] else "fit: DOES NOT FIT: " + "; ".join(v["problems"]))
    return out


def explain_link_failure(exc: CmlensError, rep: dict[str, Any]) -> None:
    """Put the linker's overflow counts beside the verdict's numbers in a failed sized link's message."""
    over = link_overflow(getattr(exc, "detail", "").splitlines())
    if not over:
        return
    v = rep["verdict"]
    said = "; ".join(v["problems"]) if not v["fits"] else "it fits"
    exc.message = (getattr(exc, "message", str(exc)) + " The linker: " +
                   "; ".join(f"region {r} overflowed by {n:,} bytes" for r, n in over) +
                   f". The fit verdict for {rep['board']['name']}: {said}.")


def fit_check(rep: dict[str, Any], elf: Path, mark: Any) -> dict[str, Any]:
    """After a `--board` run: the verdict's runtime figures beside the built ELF's sections (they must
    agree within 5 %) and the board layer's measured stack/heap marks beside the reservations."""
    from backend_core.target.memory.elf import elf_sizes

    rt = rep["runtime"]
    got = elf_sizes(elf)
    rows = []
    for figure, pred, real in (("runtime code + read-only data", rt["code"] + rt["data"], got["code"] + got["data"]),
                               ("runtime .data + .bss", rt["data"] + rt["bss"], got["data"] + got["bss"]),
                               ("stack reserved", rt["stack"], got["stack"]), ("heap reserved", rt["heap"], got["heap"])):
        rel = abs(pred - real) / max(real, 1)
        rows.append({"figure": figure, "predicted": pred, "elf": real, "within_5_percent": rel <= 0.05,
                     "difference": pred - real})
    lines = [f"fit on {rep['board']['name']}: prediction ({rt['source']}) vs the linked ELF"]
    lines += [f"  {r['figure']:32} {r['predicted']:>10,} {r['elf']:>10,}  {r['difference']:+,} B "
              f"({'ok' if r['within_5_percent'] else 'MORE THAN 5 % OFF'})" for r in rows]
    marks = None
    if mark is not None:
        marks = mark.to_dict()
        lines.append(f"  stack high-water mark {mark.stack_used:,} B of {mark.stack_size:,} B reserved; heap used "
                     f"{mark.heap_used:,} B of {mark.heap_size:,} B" + (f"; {'; '.join(mark.problems())}"
                                                                        if mark.problems() else ""))
    return {"rows": rows, "marks": marks, "ok": all(r["within_5_percent"] for r in rows), "lines": lines}
