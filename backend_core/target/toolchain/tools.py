"""Find the external tools of the target flow, with their versions, and the exact command that
installs each missing one: arm-none-eabi-gcc (+ newlib), cmake, ninja, qemu-system-arm, the Corstone
FVPs, graphviz `dot`."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

APT_TOOLCHAIN = "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib"
FVP_DOWNLOAD_PAGE = (
    "https://developer.arm.com/Tools%20and%20Software/Fixed%20Virtual%20Platforms/IoT%20FVPs")
FVP_NAMES: tuple[str, ...] = ("FVP_Corstone_SSE-300_Ethos-U55", "FVP_Corstone_SSE-320")


def apt_install(packages: str) -> str:
    """`apt-get install -y ...`, with sudo when not running as root."""
    sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
    return f"{sudo}apt-get install -y {packages}"


def fvp_install_hint(name: str) -> str:
    """Where an FVP comes from (Arm's site; EULA), and ExecuTorch's script that fetches it."""
    product = "Corstone-320" if "SSE-320" in name else "Corstone-300"
    return (f"download the {product} FVP (Linux64) from Arm's developer site, {FVP_DOWNLOAD_PAGE}, "
            f"run its installer and put {name} on PATH; or, in an ExecuTorch checkout, run "
            "examples/arm/setup.sh --i-agree-to-the-contained-eula and then "
            "source examples/arm/arm-scratch/setup_path.sh")


@dataclass(frozen=True)
class ToolSpec:
    """What to look for and how to install it."""

    name: str
    purpose: str
    install: str
    version_args: tuple[str, ...] = ("--version",)
    required: bool = True        # needed for the QEMU flow (FVPs and dot are optional here)


@dataclass(frozen=True)
class Tool:
    """A discovery result: found (path + version) or missing (with the install command)."""

    name: str
    purpose: str
    path: str | None
    version: str | None
    install: str
    required: bool = True
    note: str = ""

    @property
    def found(self) -> bool:
        return self.path is not None


def specs() -> list[ToolSpec]:
    """Every tool the doctor checks, in display order."""
    return [
        ToolSpec("arm-none-eabi-gcc", "cross-compile firmware for Cortex-M", apt_install(APT_TOOLCHAIN)),
        ToolSpec("cmake", "configure the firmware build", apt_install("cmake")),
        ToolSpec("ninja", "build the firmware", apt_install("ninja-build")),
        ToolSpec("qemu-system-arm", "run firmware on QEMU's Cortex-M boards", apt_install("qemu-system-arm")),
        *(ToolSpec(n, "run firmware on Arm's Corstone FVP", fvp_install_hint(n), required=False)
          for n in FVP_NAMES),
        ToolSpec("dot", "lay out graphs", apt_install("graphviz"), ("-V",), required=False),
    ]


def _version(path: str, args: Iterable[str]) -> str | None:
    """First line of `tool --version` that contains a version number."""
    try:
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=15,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or "") + "\n" + (out.stderr or "")
    for line in text.splitlines():
        if re.search(r"\d+\.\d+", line):
            return line.strip()
    return None


def version_number(version_line: str | None) -> str | None:
    """`arm-none-eabi-gcc (15:12.2.rel1-1) 12.2.1 20221205` -> `12.2.1` (last x.y[.z] before a date)."""
    if not version_line:
        return None
    nums = re.findall(r"(?<![\w.:])(\d+\.\d+(?:\.\d+)*)", version_line)
    return nums[-1] if nums else None


def toolchain_dirs(et_root: str | Path | None) -> list[Path]:
    """Extra places for arm-none-eabi-gcc: ExecuTorch's examples/arm/arm-scratch toolchains."""
    dirs: list[Path] = []
    if et_root:
        scratch = Path(et_root) / "examples" / "arm" / "arm-scratch"
        dirs += sorted(scratch.glob("arm-gnu-toolchain-*-arm-none-eabi/bin"), reverse=True)
    return dirs


def fvp_dirs(et_root: str | Path | None) -> list[Path]:
    """Extra places for FVPs: ExecuTorch's arm-scratch/FVP-corstone3x0/models/<platform>/."""
    dirs: list[Path] = []
    if et_root:
        scratch = Path(et_root) / "examples" / "arm" / "arm-scratch"
        dirs += sorted(scratch.glob("FVP-corstone3*/models/*"))
    return dirs


def find_tool(spec: ToolSpec, extra_dirs: Iterable[Path] = (), path_env: str | None = None) -> Tool:
    """Look on PATH (or `path_env`) and then in `extra_dirs`; never raises."""
    found = shutil.which(spec.name, path=path_env)
    if found is None:
        for d in extra_dirs:
            candidate = Path(d) / spec.name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                found = str(candidate)
                break
    version = _version(found, spec.version_args) if found else None
    return Tool(spec.name, spec.purpose, found, version, spec.install, spec.required)


def newlib_check(gcc: Tool) -> Tool:
    """newlib (libc_nano.a) for the compiler: Debian ships it in a separate package."""
    name, purpose = "newlib (libc_nano.a)", "link firmware (C library for arm-none-eabi)"
    install = apt_install("libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib")
    if not gcc.found:
        return Tool(name, purpose, None, None, install, True, "needs arm-none-eabi-gcc first")
    try:
        out = subprocess.run([str(gcc.path), "-mthumb", "-mcpu=cortex-m4", "-mfloat-abi=hard",
                              "-mfpu=fpv4-sp-d16", "-print-file-name=libc_nano.a"],
                             capture_output=True, text=True, timeout=15)
        lib = out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        lib = ""
    if lib and os.path.isabs(lib) and os.path.exists(lib):
        return Tool(name, purpose, lib, None, install, True)
    return Tool(name, purpose, None, None, install, True)


def discover(et_root: str | Path | None = None, path_env: str | None = None) -> list[Tool]:
    """Every tool of specs(), plus the newlib check right after the compiler."""
    tools: list[Tool] = []
    for spec in specs():
        extra = toolchain_dirs(et_root) if spec.name == "arm-none-eabi-gcc" else (
            fvp_dirs(et_root) if spec.name.startswith("FVP_") else [])
        tool = find_tool(spec, extra, path_env)
        tools.append(tool)
        if spec.name == "arm-none-eabi-gcc":
            tools.append(newlib_check(tool))
    return tools


def tool_by_name(tools: Iterable[Tool], name: str) -> Tool:
    """Pick one result of discover() by name."""
    for t in tools:
        if t.name == name:
            return t
    raise KeyError(name)
