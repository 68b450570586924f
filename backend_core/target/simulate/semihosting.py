"""A runner that reads its model from the host through semihosting: the files it opens and its argv."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.target.toolchain.process import LineCallback
from backend_core.target.simulate.simulator import SimResult


SEMIHOSTING_ARGV = ("executor_runner", "-m", "model.bpte", "-i", "input.bin", "-o", "out")


def semihosting_files(model: Path, workdir: Path) -> list[str]:
    """Put the model where the runner opens it (the simulator's working directory) and return the
    runner's argv. The runner insists on an `-i` file even when the bundle provides the inputs."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "model.bpte").write_bytes(model.read_bytes())
    (workdir / "input.bin").write_bytes(b"\0" * 4)
    return list(SEMIHOSTING_ARGV)


def run_semihosting(sim: Any, elf: Path, model: Path, workdir: Path, opts: Any,
                     emit: LineCallback) -> SimResult:
    argv = semihosting_files(model, workdir)
    if sim.board.simulator == "qemu":
        emit("cmlens", f"(cd {workdir}) $ " + " ".join(sim.command(elf, argv)))
        return sim.run(elf, timeout=opts.timeout, semihosting_args=argv, cwd=workdir)
    emit("cmlens", "$ " + " ".join(sim.command(elf, opts.timeout, workdir, " ".join(argv))))
    return sim.run(elf, timeout=opts.timeout, cwd=workdir, cmd_line=" ".join(argv))
