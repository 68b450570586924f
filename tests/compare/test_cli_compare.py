"""`cmlens compare`: text, --json, --html, --baseline-out on real lowerings; bad sides are exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from backend_core.orchestration.compare.baseline import read_baseline

from .conftest import V1, V2


def test_compare_two_files_writes_json_html_and_a_baseline(side, tmp_path: Path, capsys) -> None:
    side(str(V1)), side(str(V2))               # in the session cache: the CLI reads it
    j, h, b = tmp_path / "c.json", tmp_path / "c.html", tmp_path / "base.json"
    assert main(["compare", str(V1), str(V2), "--json", str(j), "--html", str(h), "--baseline-out", str(b)]) == 0
    out = capsys.readouterr().out
    assert "[1] v1/tiny_net.py" in out and "[2] v2/tiny_net.py" in out
    assert "fallbacks: 0 -> 1   (+1 added, -0 removed)" in out
    assert "+ aten.layer_norm `layer_norm` [norm]  — not_annotated" in out
    data = json.loads(j.read_text())
    assert data["format"] == "cmlens-compare" and [s["label"] for s in data["sides"]] == ["v1/tiny_net.py",
                                                                                          "v2/tiny_net.py"]
    assert data["deltas"][0]["fallbacks_added"][0]["source"].endswith("v2/tiny_net.py:22")
    page = h.read_text()
    embedded = re.search(r"<script type='application/json' id='cmlens-compare'>(.*?)</script>", page, re.S)
    assert embedded and json.loads(embedded.group(1))["deltas"] == data["deltas"]
    assert "The Cortex-M quantizer has no pattern for `layer_norm`" in page and "<script src" not in page
    assert read_baseline(b).label == "v2/tiny_net.py" and read_baseline(b).model == "tiny_net"


def test_vary_makes_one_side_per_value(side, capsys) -> None:
    side(f"{V1}@m4"), side(f"{V1}@m55")
    assert main(["compare", str(V1), "--vary", "target=m4,m55"]) == 0
    out = capsys.readouterr().out
    assert "[1] tiny_net.py (cortex-m4)" in out and "[2] tiny_net.py (cortex-m55)" in out
    assert "largest CMSIS-NN scratch" in out


@pytest.mark.parametrize("argv, says", [
    (["ds_cnn"], "compare needs two sides or more"),
    (["nosuch.json", "ds_cnn"], "File not found"),
    (["ds_cnn@m99", "ds_cnn"], "Unknown target 'm99'"),
    (["ds_cnn@colour=red", "ds_cnn"], "Unknown side option 'colour'"),
    (["ds_cnn", "--vary", "target=m4"], "fewer than two values"),
])
def test_bad_sides_are_exit_2(argv, says, capsys) -> None:
    assert main(["compare", *argv]) == 2
    assert says in capsys.readouterr().err


def test_a_result_without_graphs_is_refused_with_the_way_to_attach_it(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"model": "ds_cnn", "profile": {"ops": []}}))
    assert main(["compare", str(run), "ds_cnn"]) == 2
    err = capsys.readouterr().err
    assert "a `cmlens run --json F` result: it has no graph" in err and "SIDE@profile=RUN.json" in err


def test_lowering_options_on_a_saved_report_are_refused(side, tmp_path: Path, capsys) -> None:
    r = tmp_path / "r.json"
    r.write_text(json.dumps(side(str(V1)).report))
    assert main(["compare", f"{r}@m4", str(V1)]) == 2
    assert "lowering options apply to a model source" in capsys.readouterr().err
