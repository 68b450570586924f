"""A model file loads as `python model.py` runs it (issue 20): its folder first on sys.path while it
loads, so helpers and packages beside it import; `file.py:NAME` and `.pt2` the same; the files it
imported and read are recorded with content hashes for the result cache. Loading only (no lowering)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.models.dependencies import LoadRecorder
from tests.helpers.split_model import HELPER_WITH_LAYERNORM, write_split_model


def names(loaded) -> dict[str, str]:
    return {d.name: d.kind for d in loaded.dependencies}


def test_python_runs_it_and_so_does_cmlens(tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    proc = subprocess.run([sys.executable, str(model)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr             # the reference: plain Python imports it
    before = list(sys.path)
    loaded = load_model(parse_model_source(str(model)))
    assert sys.path == before                            # the folder was on sys.path only while it loaded
    assert loaded.module(*loaded.example_inputs).shape == (1, 4)
    assert names(loaded) == {"model.py": "model", "helper.py": "module", "blocks/__init__.py": "module",
                             "blocks/head.py": "module", "scale.txt": "data"}
    assert not any("site-packages" in d.path or "/torch/" in d.path for d in loaded.dependencies)


def test_file_colon_name_and_pt2_load_the_same_way(tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    loaded = load_model(parse_model_source(f"{model}:build"))
    assert {"helper.py", "blocks/head.py", "scale.txt"} <= set(names(loaded))
    import torch

    pt2 = tmp_path / "saved" / "net.pt2"
    pt2.parent.mkdir()
    torch.export.save(torch.export.export(loaded.module, loaded.example_inputs), str(pt2))
    saved = load_model(parse_model_source(str(pt2)))
    assert saved.dependencies[0].name == "net.pt2" and saved.dependencies[0].kind == "model"


def test_a_second_load_in_one_process_imports_the_edited_helper(tmp_path: Path) -> None:
    """Python caches imported modules: without forgetting the first load's helper, a long-lived process
    (the tests, any in-process caller) would build the old Block from the new model file."""
    model = write_split_model(tmp_path)
    first = load_model(parse_model_source(str(model)))
    assert not hasattr(first.module.block, "norm")
    (tmp_path / "helper.py").write_text(HELPER_WITH_LAYERNORM)
    second = load_model(parse_model_source(str(model)))
    assert isinstance(second.module.block.norm, __import__("torch").nn.LayerNorm)
    h1 = {d.name: d.sha256 for d in first.dependencies}["helper.py"]
    h2 = {d.name: d.sha256 for d in second.dependencies}["helper.py"]
    assert h1 != h2


def test_a_missing_helper_names_the_module_and_the_folders_searched(tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    (tmp_path / "helper.py").unlink()
    with pytest.raises(BadInputError) as e:
        load_model(parse_model_source(str(model)))
    msg = e.value.message
    assert "could not import 'helper'" in msg and "from helper import Block" in msg
    assert f"{tmp_path} (the model's folder)" in msg and "site-packages" in msg
    assert "beside model.py" in e.value.hint and "PYTHONPATH" in e.value.hint


def test_a_missing_submodule_names_the_package_folder(tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    (tmp_path / "blocks" / "head.py").unlink()
    with pytest.raises(BadInputError) as e:
        load_model(parse_model_source(str(model)))
    assert "could not import 'blocks.head'" in e.value.message
    assert f"{tmp_path / 'blocks'} (package blocks)" in e.value.message


def test_a_missing_module_inside_a_helper_points_at_the_helper_line(tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    (tmp_path / "helper.py").write_text("import torch\nimport not_installed_anywhere\nBlock = None\n")
    with pytest.raises(BadInputError) as e:
        load_model(parse_model_source(str(model)))
    assert "'not_installed_anywhere'" in e.value.message
    assert "helper.py line 2: import not_installed_anywhere" in e.value.message


def test_files_written_or_in_site_packages_are_not_recorded(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("")
    with LoadRecorder(src) as rec:
        (tmp_path / "out.txt").write_text("written, not read")
        (tmp_path / "in.txt").write_text("x")
        (tmp_path / "in.txt").read_text()
        import json  # noqa: F401  (stdlib, already imported: nothing new)
    assert {d.name for d in rec.dependencies()} == {"m.py", "in.txt"}
