"""Every way an artefact can be wrong gives a BadInputError naming the cause and the fix (exit code 2
in the CLI, a message in the GUI), never a traceback; another backend's program opens with its
delegate shown as a node."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from backend_core.lowering.artefacts import open_artefact
from backend_core.common.errors import BadInputError
from backend_core.stages.models import parse_model_source

ROOT = Path(__file__).resolve().parents[2]


def _fails(path: Path, *words: str) -> BadInputError:
    with pytest.raises(BadInputError) as e:
        open_artefact(path, use_cache=False)
    text = (e.value.message + " " + e.value.hint).lower()
    assert all(w.lower() in text for w in words), text
    assert e.value.hint
    return e.value


def test_empty_truncated_foreign_and_version_mismatch(plain, tmp_path: Path) -> None:
    data = plain("layernorm_mlp").pte.read_bytes()
    (tmp_path / "empty.pte").write_bytes(b"")
    _fails(tmp_path / "empty.pte", "empty", "export it again")
    (tmp_path / "cut.pte").write_bytes(data[: len(data) // 2])
    _fails(tmp_path / "cut.pte", "truncated", f"{len(data) // 2:,}")
    (tmp_path / "notes.pte").write_text("hello, this is not a program\n")
    _fails(tmp_path / "notes.pte", "not an ExecuTorch file", "text")
    (tmp_path / "old.pte").write_bytes(data[:4] + b"ET11" + data[8:])
    _fails(tmp_path / "old.pte", "schema version ET11", "reads ET12", "Re-export")
    (tmp_path / "garbage.pte").write_bytes(data[:8] + bytes(range(256)) * 4)
    _fails(tmp_path / "garbage.pte", "export it again")
    _fails(tmp_path / "missing.pte", "not found")


def test_bad_records_and_dumps(plain, tmp_path: Path) -> None:
    rec = plain("layernorm_mlp").etrecord.read_bytes()
    (tmp_path / "cut.etrecord").write_bytes(rec[: len(rec) // 3])
    _fails(tmp_path / "cut.etrecord", "damaged zip", "generate the ETRecord again")
    with zipfile.ZipFile(tmp_path / "other.etrecord", "w") as z:
        z.writestr("readme.txt", "x")
    _fails(tmp_path / "other.etrecord", "not an ETRecord", "generate_etrecord")
    dump = tmp_path / "alone" / "run.etdump"
    dump.parent.mkdir()
    dump.write_bytes(b"\x1c\x00\x00\x00\x00\x00\x00\x00ED00" + bytes(32))
    _fails(dump, "no graph", "--etdump")
    with pytest.raises(BadInputError) as e:
        open_artefact(plain("layernorm_mlp").pte, etdump=plain("layernorm_mlp").etrecord, use_cache=False)
    assert "given as the ETDump" in e.value.message


def test_suffix_routing_and_sniffing(plain, tmp_path: Path) -> None:
    assert parse_model_source(str(plain("ds_cnn").pte)).kind == "artefact"
    renamed = tmp_path / "etrecord.bin"                      # a common name: found by its magic
    renamed.write_bytes(plain("ds_cnn").etrecord.read_bytes())
    assert parse_model_source(str(renamed)).kind == "artefact"
    with pytest.raises(BadInputError, match="not found"):
        parse_model_source(str(tmp_path / "nope.bpte"))


def test_cli_bad_pte_exits_2_with_cause_and_fix(tmp_path: Path) -> None:
    bad = tmp_path / "model.pte"
    bad.write_bytes(b"\x00" * 3)
    p = subprocess.run([sys.executable, "-m", "app.cli", "lower", str(bad)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "model.pte is not an ExecuTorch file" in p.stderr


def test_another_backends_program_shows_its_delegate(tmp_path: Path) -> None:
    """A .pte lowered to XNNPACK (another backend): the delegate call is a node, not an error."""
    torch = pytest.importorskip("torch")
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    m = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    et = to_edge_transform_and_lower(torch.export.export(m, (torch.randn(1, 8),)),
                                     partitioner=[XnnpackPartitioner()]).to_executorch()
    (tmp_path / "xnn.pte").write_bytes(et.buffer)
    res = open_artefact(tmp_path / "xnn.pte", use_cache=False)
    (d,) = [n for n in res.final.nodes if n.kind == "delegate"]
    assert d.target == "delegate.XnnpackBackend" and d.inputs == ("input_0",) and d.shape == (1, 4)
    assert any("XnnpackBackend" in n for n in res.notes) and res.fallbacks() == []


def test_kernel_unknown_to_this_executorch_is_reported(plain, tmp_path: Path) -> None:
    """A program calling a kernel the installed ExecuTorch does not have (another version) still opens:
    positional argument names, and a note saying why."""
    data = plain("layernorm_mlp").pte.read_bytes()
    assert data.count(b"quantized_linear") == 1                  # the operator table names each kernel once
    (tmp_path / "newer.pte").write_bytes(data.replace(b"quantized_linear", b"quantized_lineax"))
    res = open_artefact(tmp_path / "newer.pte", use_cache=False)
    node = res.final.node("cortex_m_quantized_lineax_out")
    assert node is not None and node.kind == "cmsis_nn" and node.args[0].startswith("arg0=")
    assert any("cortex_m::quantized_lineax.out is not known to the installed ExecuTorch" in n for n in res.notes)
