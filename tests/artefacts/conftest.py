"""Artefacts made once per session with plain ExecuTorch APIs (plain_flow.py), a private cache, and
the project's own lowering of the same models to compare with."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.firmware.uart import parse_uart

from .plain_flow import PlainArtefacts, make_artefacts

FIXTURES = Path(__file__).resolve().parents[1] / "firmware" / "fixtures"

_MADE: dict[str, PlainArtefacts] = {}


@pytest.fixture(scope="session")
def plain(tmp_path_factory: pytest.TempPathFactory):
    """plain(zoo_name) -> PlainArtefacts (.pte, .bpte, .etrecord made by ExecuTorch's own APIs)."""
    pytest.importorskip("executorch")
    root = tmp_path_factory.mktemp("plain")

    def get(name: str) -> PlainArtefacts:
        if name not in _MADE:
            _MADE[name] = make_artefacts(name, root / name)
        return _MADE[name]
    return get


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory):
    """The ETDump + debug buffer of a real QEMU run (UART text) and the ETRecord + .bpte of the same
    seeded model made here with plain ExecuTorch APIs (the same program as the one that ran)."""
    pytest.importorskip("executorch")
    from .plain_flow import make_from_file

    work = tmp_path_factory.mktemp("run")
    block = parse_uart((FIXTURES / "uart_etdump_tiny_conv_pass_mps3-an547.txt").read_text()).etdumps[0]
    (work / "run.etdump").write_bytes(block.files["etdump.bin"])
    (work / "debug_buffer.bin").write_bytes(block.files["debug_buffer.bin"])
    made = make_from_file(FIXTURES / "tiny_conv_model.py", work)
    assert len(made.pte.read_bytes()) == 5932          # the runner logged "PTE Model data loaded. Size: 5932"
    return work, made
