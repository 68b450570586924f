"""A built runner's flash and static RAM, from `arm-none-eabi-size -A` (section name, size, address).

Flash = the load image: code (.text*, .rodata*, .ARM.exidx/extab, vectors, init arrays, copy tables)
and the initial values of .data. The baked-in model (`network_model_sec`, which the kernels/ linker
script collects in `.big.data`) is reported apart so it is not counted twice with the `.pte`.
Static RAM = .data + .bss + the .stack and .heap reservations, without the runner's allocator pools
(`.bss.*allocator_sec`, `.bss.tensor_arena`: the kernels/ linker script collects them in `.big.bss` and
`.big.temp`), which the verdict sizes from the prediction instead."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from backend_core.common.errors import BadInputError, ToolMissingError

POOL_SECTIONS = ("allocator_sec", "tensor_arena", "ethosu_scratch", "fast_memory", ".big.bss", ".big.temp")
MODEL_SECTIONS = (".big.data", "network_model_sec")
_CODE = re.compile(r"^\.(text|rodata|ARM\.exidx|ARM\.extab|vectors|isr_vector|init_array|fini_array|preinit_array"
                   r"|copy\.table|zero\.table|model)")
_RAM_DATA = re.compile(r"^\.(data|got)")
_RAM_BSS = re.compile(r"^\.(bss|noinit|tbss)")


def parse_size_a(text: str) -> dict[str, int]:
    """`arm-none-eabi-size -A` output -> {section: size}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = out.get(parts[0], 0) + int(parts[1])
    return out


def totals(sections: dict[str, int], model_bytes: int = 0) -> dict[str, int]:
    """Flash / RAM figures of one ELF. `model_bytes` is only used for an ELF whose model sits in
    .rodata (not the kernels/ layout): it is then taken out of the code figure."""
    pools = sum(v for k, v in sections.items() if any(p in k for p in POOL_SECTIONS))
    model = sum(v for k, v in sections.items() if k in MODEL_SECTIONS)
    code = sum(v for k, v in sections.items() if _CODE.match(k))
    if not model and model_bytes:
        code, model = max(code - model_bytes, 0), model_bytes
    data = sum(v for k, v in sections.items() if _RAM_DATA.match(k))
    bss = sum(v for k, v in sections.items() if _RAM_BSS.match(k) and not any(p in k for p in POOL_SECTIONS))
    stack = sum(v for k, v in sections.items() if k.startswith(".stack"))
    heap = sum(v for k, v in sections.items() if k.startswith(".heap"))
    return {"flash_code": code + data, "code": code, "ram_static": data + bss + stack + heap,
            "pools": pools, "model_in_image": model, "data": data, "bss": bss, "stack": stack, "heap": heap}


def elf_sizes(elf: str | Path, model_bytes: int = 0, size_tool: str | None = None) -> dict[str, int]:
    """Run `arm-none-eabi-size -A ELF`; ToolMissingError / BadInputError with a fix."""
    p = Path(elf)
    if not p.is_file():
        raise BadInputError(f"No runner ELF at {p}.", "Build one with `cmlens run` first, or drop --elf.")
    tool = size_tool or shutil.which("arm-none-eabi-size")
    if tool is None:
        raise ToolMissingError("arm-none-eabi-size", "sudo apt-get install binutils-arm-none-eabi",
                               "read the runner's section sizes")
    res = subprocess.run([tool, "-A", str(p)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise BadInputError(f"arm-none-eabi-size could not read {p}: {res.stderr.strip()}",
                            "Pass the .elf the runner build produced.")
    sections = parse_size_a(res.stdout)
    out = totals(sections, model_bytes)
    out["sections"] = len(sections)
    return out
