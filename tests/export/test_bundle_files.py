"""The bundle `cmlens export` writes, for a real lowered ds_cnn (the judge's recorded M55 .bpte): every
file is there, the C array is the program byte for byte in a named, aligned section, the pools are the
memory plan's figures, the op list is the program's, the I/O quantisation is the program's; and the
folder is written all or nothing. No ExecuTorch checkout is needed: ds_cnn has no portable op, so no
kernel source is looked up."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.target.export import BundleSpec, is_bundle, write_bundle
from backend_core.target.export.bundle import FILES, REFERENCE_FILES
from backend_core.target.memory.method_alloc import estimate_method_allocator
from backend_core.target.memory.plan import read_plan
from backend_core.target.build.ops import program_bytes, read_program_ops

BPTE = Path(__file__).resolve().parents[1] / "judge" / "fixtures" / "ds_cnn_m55.bpte"


def _spec(tmp_path: Path) -> BundleSpec:
    return BundleSpec("ds_cnn", "cortex-m55", tmp_path / "executorch", "0" * 40, None, "dbf45dbf", "cmlens export ds_cnn -o b")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("export")
    return write_bundle(program_bytes(BPTE.read_bytes()), _spec(tmp), tmp / "bundle", bpte=BPTE.read_bytes())


def test_every_file_is_written(bundle) -> None:
    assert sorted(p.name for p in bundle.folder.iterdir()) == sorted(FILES + REFERENCE_FILES)
    assert is_bundle(bundle.folder)
    assert not [p for p in bundle.folder.parent.iterdir() if p.name.startswith(".")]   # no temp folder left


def test_header_array_is_the_program_in_a_named_aligned_section(bundle) -> None:
    pte = (bundle.folder / "model.pte").read_bytes()
    assert pte == program_bytes(BPTE.read_bytes())
    text = (bundle.folder / "model_pte.h").read_text()
    body = text.split("= {", 1)[1].split("};", 1)[0]
    assert bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)) == pte
    assert f"#define CMLENS_MODEL_PTE_SIZE {len(pte)}u" in text
    assert "static const unsigned char cmlens_model_pte" in text
    assert '__attribute__((section(CMLENS_MODEL_PTE_SECTION), aligned(16), used))' in text
    assert '#define CMLENS_MODEL_PTE_SECTION "network_model_sec"' in text


def test_pools_are_the_memory_plans_figures(bundle) -> None:
    plan = read_plan((bundle.folder / "model.pte").read_bytes())
    header = (bundle.folder / "cmlens_model.h").read_text()
    defines = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define (CMLENS_\w+_SIZE) (\d+)u", header)}
    assert [defines[f"CMLENS_PLANNED_ARENA_{i}_SIZE"] for i in range(1, len(plan.buffer_sizes))] == plan.buffer_sizes[1:]
    assert defines["CMLENS_PLANNED_ARENA_1_SIZE"] == 20464          # ds_cnn on M55 (the runner measured the same)
    temp = defines["CMLENS_TEMP_ALLOCATOR_POOL_SIZE"]
    loaded = estimate_method_allocator(plan, temp_pool=temp).loaded
    assert defines["CMLENS_METHOD_ALLOCATOR_POOL_SIZE"] == (loaded + 15) // 16 * 16 == 11040
    assert "non_const_buffer_sizes[1]" in header and "method_alloc.py" in header   # where each figure came from
    source = (bundle.folder / "cmlens_model.cpp").read_text()
    for name, section in (("cmlens_planned_arena_1", ".bss.cmlens_planned_arena_1"),
                          ("cmlens_method_allocator_pool", ".bss.cmlens_method_allocator"),
                          ("cmlens_temp_allocator_pool", ".bss.cmlens_temp_allocator")):
        assert re.search(rf"static uint8_t {name}\[\w+\] "
                         rf"__attribute__\(\(section\(\"{re.escape(section)}\"\), aligned\(16\)\)\);",
                         source), name
    assert not re.search(r"\b(malloc|calloc|realloc)\s*\(", source)   # static pools, placement new only


def test_op_list_is_the_programs(bundle) -> None:
    ops = read_program_ops((bundle.folder / "model.pte").read_bytes())
    listed = (bundle.folder / "model_ops.txt").read_text().strip().split(",")
    assert sorted(listed) == sorted(o for o in ops if o.startswith("cortex_m::")) and len(listed) == 7
    cmake = (bundle.folder / "cmlens_model.cmake").read_text()
    assert f'set(CMLENS_MODEL_SELECT_OPS_LIST "{",".join(listed)}"' in cmake
    source = (bundle.folder / "cmlens_model.cpp").read_text()    # the link fails without any one of them
    assert all(f'extern "C" const char cmlens_op_{re.sub(r"[^A-Za-z0-9_]", "_", op)};' in source for op in listed)
    assert "string(MAKE_C_IDENTIFIER \"cmlens_op_${_op}\" _sym)" in cmake
    info = json.loads((bundle.folder / "bundle.json").read_text())
    assert info["selective_build"]["ops"] == listed and info["selective_build"]["portable"] == []
    assert all(o["kernel"].startswith("CMSIS-NN") for o in info["ops"])


def test_io_formats_are_the_programs(bundle) -> None:
    info = json.loads((bundle.folder / "bundle.json").read_text())
    (inp,), (out,) = info["io"]["inputs"], info["io"]["outputs"]
    assert (inp["dtype"], inp["shape"], inp["dim_order"], inp["nbytes"]) == ("float32", [1, 1, 49, 10], [0, 2, 1, 3], 1960)
    assert (out["dtype"], out["shape"], out["nbytes"]) == ("float32", [1, 12], 48)
    assert inp["quantization"]["op"] == "cortex_m::quantize_per_tensor.out"
    assert out["quantization"]["op"] == "cortex_m::dequantize_per_tensor.out"
    header = (bundle.folder / "cmlens_model.h").read_text()
    assert f"#define CMLENS_MODEL_INPUT_0_SCALE {inp['quantization']['scale']!r}f" in header
    assert f"#define CMLENS_MODEL_OUTPUT_0_ZERO_POINT {out['quantization']['zero_point']}" in header
    readme = (bundle.folder / "README.md").read_text()
    assert "## Memory" in readme and "cmlens export ds_cnn -o b" in readme


def test_existing_folder_that_is_not_a_bundle_is_refused_unless_forced(tmp_path: Path) -> None:
    pte = program_bytes(BPTE.read_bytes())
    mine = tmp_path / "firmware"
    mine.mkdir()
    (mine / "main.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(BadInputError, match="not an earlier bundle"):
        write_bundle(pte, _spec(tmp_path), mine)
    assert [p.name for p in mine.iterdir()] == ["main.c"]
    write_bundle(pte, _spec(tmp_path), mine, force=True)
    assert is_bundle(mine) and not (mine / "main.c").exists()
    write_bundle(pte, _spec(tmp_path), mine)                     # an earlier bundle is replaced without --force
    assert sorted(p.name for p in mine.iterdir()) == sorted(FILES)          # made from a .pte: no reference


def test_a_program_that_cannot_be_read_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(BadInputError):
        write_bundle(b"\0" * 64, _spec(tmp_path), tmp_path / "bundle")
    assert list(tmp_path.iterdir()) == []


def test_runtime_figure_counts_the_portable_kernels_the_probe_could_not() -> None:
    """Slim libraries have no portable kernels, so the link probe leaves them out ("not counted"); the
    bundle's figure adds each from the shipped per-op table (measured: layernorm_mlp on M55 linked 44 KB
    over the figure without them)."""
    from backend_core.target.export.report import complete_runtime
    from backend_core.target.memory.runtime import load_table

    probe = {"source": "libraries", "cpu": "cortex-m55", "code": 232530, "data": 3588, "bss": 24292, "stack": 8192,
             "heap": 16384, "notes": ["aten::clamp.out: no portable/quantized kernel found in /x/lib (not counted)",
                                      "link probe 0.1 s"]}
    clamp = load_table()["cpus"]["cortex-m55"]["ops"]["aten::clamp.out"]
    done = complete_runtime(probe)
    assert done["code"] == 232530 + clamp["code"] and done["data"] == 3588 + clamp.get("data", 0)
    assert done["flash"] == done["code"] + done["data"]
    assert any(n.startswith("aten::clamp.out: counted from the shipped table") for n in done["notes"])
    assert probe["code"] == 232530                                    # the memory report's own figure is untouched
    assert complete_runtime({**probe, "notes": []})["code"] == 232530


def test_readme_is_a_recipe_with_the_tools_recorded_and_a_reference(bundle) -> None:
    """Issue 44, item 7: the README named no Python (a user's build used the system python3 and failed after
    145 s with ModuleNotFoundError), no CPU flags or toolchain file, no linker-script or startup needs, no
    QEMU command, no CMLENS_ET_INSTALL_DIR and no reference. (The build itself, from the README alone: the
    opt-in tests/export/test_readme_recipe_qemu.py.)"""
    from backend_core.target.export.reference import reference_of

    readme = (bundle.folder / "README.md").read_text()
    for words in ("CMLENS_PYTHON=", "-DCMLENS_PYTHON=", "CMLENS_FLATC", "-mcpu=cortex-m55 -mfloat-abi=hard -mthumb",
                  "-DCMAKE_TOOLCHAIN_FILE=path/to/this/folder/toolchain.cmake", "-DCMLENS_ET_INSTALL_DIR=",
                  "network_model_sec", ".bss.cmlens_*", "__libc_init_array()", ".init_array",
                  "qemu-system-arm -M mps3-an547 -nographic -semihosting-config enable=on,target=native -kernel",
                  "cmlens_reference.h", "memcmp(out0, cmlens_reference_output_0"):
        assert words in readme, words
    cmake = (bundle.folder / "cmlens_model.cmake").read_text()
    assert f'set(CMLENS_PYTHON "{bundle.info["recipe"]["python"]}" CACHE FILEPATH' in cmake
    assert 'import executorch, torchgen, yaml' in cmake                # checked at configure, not after the libraries
    assert "find_program(CMLENS_PYTHON" not in cmake                   # never the system python3 silently
    toolchain = (bundle.folder / "toolchain.cmake").read_text()
    assert 'set(CMLENS_CPU_FLAGS "-mcpu=cortex-m55 -mfloat-abi=hard -mthumb")' in toolchain
    ref = reference_of(BPTE.read_bytes())
    assert (bundle.folder / "reference_input_0.bin").read_bytes() == ref.inputs[0]
    assert (bundle.folder / "reference_output_0.bin").read_bytes() == ref.outputs[0] and len(ref.outputs[0]) == 48
    header = (bundle.folder / "cmlens_reference.h").read_text()
    body = header.split("cmlens_reference_output_0[48]", 1)[1].split("};", 1)[0]
    assert bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)) == ref.outputs[0]
    assert bundle.info["reference"]["outputs"] == ["reference_output_0.bin"]


def test_a_bundle_without_a_test_case_says_it_has_no_reference(tmp_path: Path) -> None:
    b = write_bundle(program_bytes(BPTE.read_bytes()), _spec(tmp_path), tmp_path / "bundle")
    assert not (b.folder / "cmlens_reference.h").exists() and b.info["reference"] is None
    assert "No reference input: the bundle was made from a `.pte`" in (b.folder / "README.md").read_text()


def test_a_program_with_the_own_ops_ships_and_compiles_their_kernels(tmp_path: Path) -> None:
    """A scheduled program's cmlens::window/tiles: the bundle carries kernels/cmlens_ops.cpp and its CMake
    compiles it into an op library of its own; a program without them gets neither."""
    from backend_core.target.export.cmake_files import model_cmake, own_kernel_files
    from backend_core.target.export.program import ProgramFacts

    ops = ["cortex_m::quantized_conv2d.out", "cmlens::window.out", "cmlens::tiles.out"]
    files = own_kernel_files(ops)
    assert list(files) == ["kernels/cmlens_ops.cpp"] and b'Kernel("cmlens::window.out"' in files["kernels/cmlens_ops.cpp"]
    text = model_cmake(ProgramFacts(b"", None, ops), tmp_path / "executorch", "cortex-m55", None, None, None)
    assert "set(_cmlens_own_sources ${CMLENS_MODEL_DIR}/kernels/cmlens_ops.cpp)" in text
    assert own_kernel_files(ops[:1]) == {}
    assert "set(_cmlens_own_sources )" in model_cmake(ProgramFacts(b"", None, ops[:1]), tmp_path / "executorch",
                                                      "cortex-m55", None, None, None)
