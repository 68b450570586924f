"""Flash / static RAM of a linked Arm ELF from `arm-none-eabi-size -A` (a real link, no fixture)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.target.memory.elf import elf_sizes

SRC = """
unsigned char pool[4096] __attribute__((section(".big.bss")));
unsigned char state[300];
int table[64] = {1};
const char text[1000] = "x";
void _start(void) { for (;;) { pool[0] = state[1] + table[2] + text[3]; } }
"""


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs gcc-arm-none-eabi (make test installs it)")
def test_elf_sizes_split_code_static_ram_and_pools(tmp_path: Path) -> None:
    c = tmp_path / "t.c"
    c.write_text(SRC)
    elf = tmp_path / "t.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O1", "-nostdlib", "-o", str(elf), str(c)],
                   check=True, capture_output=True)
    s = elf_sizes(elf)
    assert s["pools"] == 4096                       # the runner's allocator pools are sized by the prediction
    assert s["bss"] >= 300 and s["data"] >= 256      # state[] and table[]
    assert s["flash_code"] >= 1000 + 256             # text[] + .data load image
    assert s["ram_static"] == s["data"] + s["bss"] + s["stack"] + s["heap"]
    with pytest.raises(BadInputError, match="No runner ELF"):
        elf_sizes(tmp_path / "missing.elf")
