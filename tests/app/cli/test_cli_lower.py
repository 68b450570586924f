"""`cmlens lower` as users run it: exit codes, messages for bad input, reports on disk."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "models"


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(["lower", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_unknown_zoo_name_exits_2_fast_without_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "app.cli", "lower", "resnet9000"], capture_output=True,
                          text=True, timeout=120, cwd=FIX.parents[2])
    assert proc.returncode == 2
    assert "Unknown model 'resnet9000'" in proc.stderr and "ds_cnn" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_target_exits_2(capsys) -> None:
    code, _, err = run(capsys, "ds_cnn", "--target", "cortex-m99")
    assert code == 2 and "Unknown target" in err and "cortex-m55" in err


def test_missing_file_exits_2(capsys, tmp_path) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.py"))
    assert code == 2 and "not found" in err


def test_python_file_without_entry_points_exits_2(capsys) -> None:
    code, _, err = run(capsys, str(FIX / "no_entry_points.py"))
    assert code == 2 and "get_model()" in err and "get_example_inputs()" in err


def test_python_file_raising_on_import_names_the_error_and_line(capsys) -> None:
    code, _, err = run(capsys, str(FIX / "raises_on_import.py"))
    assert code == 2 and "KeyError" in err and "line 4" in err
    assert "Traceback" not in err


def test_corrupt_pt2_exits_2(capsys) -> None:
    code, _, err = run(capsys, str(FIX / "corrupt.pt2"))
    assert code == 2 and "not a readable torch.export program" in err


def test_data_dependent_control_flow_fails_the_export_stage(capsys, tmp_path) -> None:
    out_json = tmp_path / "r.json"
    code, _, err = run(capsys, str(FIX / "data_dependent.py"), "--json", str(out_json))
    assert code == 3
    assert "float export" in err and "data-dependent control flow" in err
    rep = json.loads(out_json.read_text())
    assert rep["status"] == "failed" and rep["error"]["stage"] == "float export"


def test_failing_pass_names_stage_and_node_and_keeps_earlier_stages(capsys, tmp_path) -> None:
    out_json = tmp_path / "r.json"
    code, _, err = run(capsys, "maxpool_ceil", "--flow", "explicit", "--json", str(out_json), "--no-cache")
    assert code == 3
    assert "ValidateCortexMExplicitLayoutPass" in err and "aten_max_pool2d_default" in err
    assert "NHWC-eligible" in err
    rep = json.loads(out_json.read_text())
    assert rep["status"] == "failed"
    assert rep["error"]["node"] == "aten_max_pool2d_default"
    assert [s["name"] for s in rep["stages"]][:3] == ["float export", "quantized", "edge"]
    assert rep["stages"][-1]["name"] == "CortexMCanonicalizeViewCopyPermutePass #2"


def test_fail_on_fallback_exit_codes(capsys) -> None:
    code, out, _ = run(capsys, "layernorm_mlp", "--fail-on-fallback")
    assert code == 1 and "2 fallback(s)" in out and "native_layer_norm" in out
    code, out, _ = run(capsys, "ds_cnn", "--fail-on-fallback")
    assert code == 0 and "No fallbacks" in out


def test_user_file_with_named_callable(capsys, tmp_path) -> None:
    code, out, _ = run(capsys, f"{FIX / 'good_model.py'}:with_exp", "--json", str(tmp_path / "r.json"))
    assert code == 0
    rep = json.loads((tmp_path / "r.json").read_text())
    assert [f["op"] for f in rep["fallbacks"]] == ["aten.exp.default"]
    assert rep["fallbacks"][0]["category"] == "not_annotated"
    exp_line = next(i for i, ln in enumerate((FIX / "good_model.py").read_text().splitlines(), 1)
                    if "torch.exp(" in ln)
    assert rep["fallbacks"][0]["source"].endswith(f"good_model.py:{exp_line}")


def test_saved_pt2_program_lowers(capsys, tmp_path) -> None:
    import torch

    sys.path.insert(0, str(FIX))
    try:
        import good_model
    finally:
        sys.path.remove(str(FIX))
    ep = torch.export.export(good_model.get_model(), good_model.get_example_inputs())
    path = tmp_path / "tiny.pt2"
    torch.export.save(ep, str(path))
    code, out, _ = run(capsys, str(path))
    assert code == 0 and "tiny → cortex-m55" in out


def test_calibration_folder_and_bad_folder(capsys, tmp_path) -> None:
    import numpy as np

    good = tmp_path / "calib"
    good.mkdir()
    for i in range(3):
        np.save(good / f"s{i}.npy", np.random.randn(1, 8).astype("float32"))
    code, _, _ = run(capsys, str(FIX / "good_model.py"), "--calib", str(good), "--no-cache")
    assert code == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "s0.npy", np.zeros((2, 3), dtype="float32"))
    code, _, err = run(capsys, str(FIX / "good_model.py"), "--calib", str(bad), "--no-cache")
    assert code == 2 and "shape (2, 3)" in err and "(1, 8)" in err


def test_html_report_is_standalone_with_svg_graphs(capsys, tmp_path) -> None:
    html = tmp_path / "r.html"
    code, _, _ = run(capsys, "layernorm_mlp", "--html", str(html))
    assert code == 0
    text = html.read_text()
    assert "<h2>Memory</h2>" in text           # the memory section's live-bytes plot: static svg
    assert text.count("<svg") == 1             # the graphs are drawn by the inline viewer (tests/report/)
    data = text[text.index("id='cmlens-data'>") + 17:]
    assert len(json.loads(data[:data.index("</script>")])["lowerings"][0]["stages"]) == 12
    assert "aten_native_layer_norm_default" in text and "not_annotated" in text
    assert "http://" not in text.replace("http://www.w3.org", "")   # no network resources


def test_second_lowering_comes_from_the_cache(capsys) -> None:
    run(capsys, "deep_autoencoder")
    code, out, _ = run(capsys, "deep_autoencoder")
    assert code == 0 and "(from cache)" in out


def test_int16_activations_explain_rejections_as_unsupported_dtype(capsys, tmp_path) -> None:
    out = tmp_path / "r.json"
    code, _, _ = run(capsys, str(FIX / "good_model.py"), "--activations", "int16", "--json", str(out))
    assert code == 0
    rep = json.loads(out.read_text())
    linears = [f for f in rep["fallbacks"] if f["op"] == "aten.linear.default"]
    assert len(linears) == 2
    for f in linears:
        assert f["category"] == "unsupported_dtype"
        assert "unsupported quantization config" in f["reason"]
        assert "int8" in f["suggestion"]
