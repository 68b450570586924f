"""`cmlens run MODEL --board B` before any build: the fit verdict of the whole firmware decides, with
the numbers `cmlens memory MODEL --board B` prints, and a firmware that fits gets its pools, stack,
heap and sections where the verdict put them (backend_core/common/boards/sized.py). The link and the QEMU
run of such a layout are in test_board_layer_qemu.py; the ExecuTorch runner on it in the closing note."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.target.build.board_fit import DoesNotFitError, plan_board_run
from backend_core.common.boards.resolve import resolve_run_board
from backend_core.common.boards.specs import BoardSpec, Region
from backend_core.target.memory.runtime import load_table


@pytest.fixture(scope="module")
def ds_cnn_bpte(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    res = lower("ds_cnn", PipelineOptions(target="cortex-m55"), outputs=LowerOutputs(pte=True, bpte=True))
    assert res.status == "done", res.error
    out = tmp_path_factory.mktemp("sized") / "ds_cnn.bpte"
    out.write_bytes(res.blobs["model.bpte"])
    return out


def _mcu(ram_kib: int, flash_kib: int) -> BoardSpec:
    return BoardSpec(f"test-m55-{ram_kib}k", "cortex-m55", None,
                     (Region("SRAM", ram_kib * 1024, "ram"), Region("FLASH", flash_kib * 1024, "flash")), "test")


needs_table = pytest.mark.skipif("cortex-m55" not in load_table().get("cpus", {}),
                                 reason="resources/boards/runtime.json has no cortex-m55 row")


@needs_table
def test_a_board_too_small_for_the_whole_firmware_is_refused_before_the_build(ds_cnn_bpte: Path,
                                                                             tmp_path: Path) -> None:
    """ds_cnn's pools (~32 KiB) fit a board that the whole firmware does not: refused, and the message
    is the verdict's own problem list. The size is taken between the two from the plan of a big board,
    since the runtime's size depends on the libraries found (a link probe) or the table."""
    (tmp_path / "big").mkdir()
    _, big = plan_board_run(ds_cnn_bpte, _mcu(512, 1024), tmp_path / "big", ops=["cortex_m::quantized_conv2d.out"])
    whole = sum(n["bytes"] for n in big["verdict"]["needs"] if n["kind"] == "ram")
    pools = big["method_allocator"]["used"] + big["temp_allocator_bytes"]
    ram_kib = (pools + whole) // 2 // 1024
    assert pools < ram_kib * 1024 < whole
    small = tmp_path / "small"
    small.mkdir()
    with pytest.raises(DoesNotFitError) as err:
        plan_board_run(ds_cnn_bpte, _mcu(ram_kib, 1024), small, ops=["cortex_m::quantized_conv2d.out"])
    rep = err.value.report
    v = rep["verdict"]
    assert not v["fits"] and err.value.exit_code == 2
    assert "; ".join(v["problems"]) in err.value.message
    ram = sum(n["bytes"] for n in v["needs"] if n["kind"] == "ram")
    assert ram > ram_kib * 1024 > rep["method_allocator"]["used"] + rep["temp_allocator_bytes"]
    assert not list(small.iterdir())          # nothing was written: no board table, no build


@needs_table
def test_a_board_that_fits_gets_the_verdicts_pools_and_placement(ds_cnn_bpte: Path, tmp_path: Path) -> None:
    board, rep = plan_board_run(ds_cnn_bpte, _mcu(512, 1024), tmp_path, ops=[])
    v = rep["verdict"]
    assert v["fits"] and board.qemu_board == "mps3-an547" and board.machine == "mps3-an547"
    need = {n["name"]: n for n in v["needs"]}
    assert rep["pools"] == {"method": need["method allocator pool"]["bytes"], "temp": need["temp allocator pool"]["bytes"]}
    assert need["method allocator pool"]["bytes"] == (rep["method_allocator"]["used"] + rep["etdump_base64_bytes"])
    aliases = dict(board.sections)
    assert aliases["POOL"] == "SRAM" and aliases["CODE"] == aliases["MODEL"] == "FLASH"
    assert board.stack_bytes == rep["runtime"]["stack"] and board.heap_bytes == rep["runtime"]["heap"]
    assert Path(board.table_file).is_file() and Path(board.table_file).is_relative_to(tmp_path)
    flash = next(r for r in board.memory if r.name == "FLASH")
    assert flash.length == 1024 * 1024 and flash.origin == 0x70000000    # mps3-an547's DDR (its CODE region)


def test_board_names_and_cores() -> None:
    from backend_core.common.errors import BadInputError

    assert resolve_run_board("cortex-m7", "qemu", "stm32f746").board.name == "mps2-an500"
    assert resolve_run_board("cortex-m4", "qemu", "mps2-an386").board.name == "mps2-an386"
    with pytest.raises(BadInputError, match="has a cortex-m7, the model is lowered for cortex-m55"):
        resolve_run_board("cortex-m55", "qemu", "stm32f746")
    with pytest.raises(BadInputError, match="QEMU has no board with a cortex-m85"):
        resolve_run_board("cortex-m85", "qemu", "ra8d1")


def test_a_run_board_is_resolved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--board NAME`: one look-up of the name and one of the CPU's board, both kept on the RunBoard (the
    plan, the fit, the sized board and the pre-flight read it instead of resolving the name again)."""
    import backend_core.common.boards.resolve as resolve

    calls: list[str] = []
    for name in ("board_named", "board_for", "board_by_name", "qemu_base"):
        real = getattr(resolve, name)
        monkeypatch.setattr(resolve, name, lambda *a, _r=real, _n=name, **k: calls.append(_n) or _r(*a, **k))
    mcu = resolve.resolve_run_board("cortex-m55", "qemu", "alif-e7")
    assert (mcu.board.name, mcu.spec.name, mcu.mcu) == ("mps3-an547", "alif-e7", True)
    assert calls == ["board_for", "board_named"]
    plain = resolve.resolve_run_board("cortex-m55")
    assert (plain.board.name, plain.spec.name, plain.mcu) == ("mps3-an547", "mps3-an547", False)
