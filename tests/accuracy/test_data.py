"""Data in: a --data folder of .npy + labels.csv and an image folder for a model file written here, the
flips traced to the user's own lines, and every bad-data error naming the file and the fix."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from backend_core.common.errors import BadInputError

from .conftest import Evaluated, write_npy_folder


def _evaluate(ev: Evaluated, folder: Path, **kw):
    from backend_core.analyses.accuracy import evaluate, load_eval_set

    p = ev.programs
    data = load_eval_set(p.loaded, p.example_inputs, str(folder), calibration=p.calibration, limit=kw.pop("limit", None))
    return evaluate(p, data, **kw)


def test_npy_folder_with_labels_on_a_user_model(user_model: Evaluated) -> None:
    import torch

    from backend_core.stages.models.digits import split

    ev = user_model.result.steps["evaluate"]
    assert ev["samples"] == 150 and ev["task"] == "classification" and "labels.csv" in ev["data"]
    _, x_te, _, y_te = split()
    with torch.no_grad():
        expected = (user_model.programs.float_model(x_te[:150]).argmax(1) == y_te[:150]).float().mean().item()
    assert ev["models"]["float"]["top1"] == pytest.approx(expected)
    assert not ev["warnings"]


def test_flips_are_traced_to_the_users_own_layer_and_line(user_model: Evaluated) -> None:
    ev = user_model.result.steps["evaluate"]
    fl = ev["flips"]
    assert fl["count"] > 0, "one random calibration image should flip some predictions"
    assert fl["count"] == len(ev["flipped"]) == sum(g["flips"] for g in fl["by_layer"])
    lines = (user_model.folder / "model.py").read_text().splitlines()
    for s in fl["samples"]:
        assert s["float"] != s["lowered"]
        if s["layer"] is not None:
            assert s["profile_db"][s["layer"]] < fl["median_profile_db"][s["layer"]] - fl["threshold_db"]
    named = [g for g in fl["by_layer"] if g["layer"] is not None]
    assert named, fl["by_layer"]
    for g in named:
        file, line = g["source"].rsplit(":", 1)
        assert Path(file).name == "model.py" and "self." in lines[int(line) - 1]    # the forward() line
        assert g["module"] in g["label"] and f"model.py:{line}" in g["label"]
        assert g["sqnr_db"] < g["median_sqnr_db"]
    from backend_core.analyses.accuracy.table import summary_lines

    text = "\n".join(summary_lines(ev))
    assert f"of {fl['count']} flips start at {named[0]['label']}: SQNR" in text


def test_image_folder_with_the_files_preprocess(user_model: Evaluated, tmp_path: Path) -> None:
    from PIL import Image

    from backend_core.stages.models.digits import split

    _, x_te, _, y_te = split()
    root = tmp_path / "png"
    for i in range(40):
        d = root / str(int(y_te[i]))
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.round(x_te[i, 0].numpy() * 255).astype(np.uint8), "L").save(d / f"img{i:02d}.png")
    ev = _evaluate(user_model, root, flips=False)
    assert ev["classes"] == [str(c) for c in range(10)] and ev["samples"] == 40
    assert "preprocess() of the model file" in ev["data"]
    tensors = user_model.result.steps["evaluate"]["models"]["float"]["predictions"][:40]
    by_class = sorted(range(40), key=lambda i: (int(y_te[i]), f"img{i:02d}.png"))     # the folder's order
    agree = sum(p == tensors[i] for p, i in zip(ev["models"]["float"]["predictions"], by_class))
    assert agree >= 39                      # 8-bit PNG rounding may move one near tie at most


def test_calibration_samples_in_the_evaluation_data_are_named(digits: Evaluated, tmp_path: Path) -> None:
    from backend_core.analyses.accuracy import load_eval_set
    from backend_core.stages.models.digits import split

    x_tr, x_te, _, _ = split()
    np.save(tmp_path / "calib_twin.npy", x_tr[3].numpy())            # a calibration image of digits_cnn
    np.save(tmp_path / "fresh.npy", x_te[0].numpy())
    (tmp_path / "labels.csv").write_text("calib_twin.npy,1\nfresh.npy,2\n")
    p = digits.programs
    es = load_eval_set(p.loaded, p.example_inputs, str(tmp_path), calibration=p.calibration)
    assert len(es.warnings) == 1 and "1 evaluation sample(s) are also calibration samples: calib_twin.npy." in es.warnings[0]
    assert "fresh.npy" not in es.warnings[0]


def _error(digits: Evaluated, folder: Path) -> str:
    from backend_core.analyses.accuracy import load_eval_set

    p = digits.programs
    with pytest.raises(BadInputError) as e:
        load_eval_set(p.loaded, p.example_inputs, str(folder))
    return e.value.message + " | " + e.value.hint


def test_bad_data_errors_name_the_file_and_the_fix(digits: Evaluated, tmp_path: Path) -> None:
    good = np.zeros((1, 8, 8), np.float32)

    def folder(name: str, files: dict[str, object], labels: str | None) -> Path:
        d = tmp_path / name
        d.mkdir()
        for f, v in files.items():
            (d / f).write_bytes(v) if isinstance(v, bytes) else np.save(d / f, v)
        if labels is not None:
            (d / "labels.csv").write_text(labels)
        return d

    msg = _error(digits, folder("unreadable", {"a.npy": b"not a numpy file"}, "a.npy,1\n"))
    assert "Cannot read" in msg and "a.npy" in msg and "numpy.save" in msg
    msg = _error(digits, folder("shape", {"a.npy": np.zeros((3, 8, 8), np.float32)}, "a.npy,1\n"))
    assert "a.npy" in msg and "(3, 8, 8)" in msg and "(1, 1, 8, 8)" in msg and "input shape" in msg
    msg = _error(digits, folder("dtype", {"a.npy": np.zeros((1, 8, 8), np.uint8)}, "a.npy,1\n"))
    assert "a.npy" in msg and "torch.uint8" in msg and "torch.float32" in msg and "/ 255" in msg
    msg = _error(digits, folder("missing", {"a.npy": good, "b.npy": good}, "a.npy,1\n"))
    assert "labels.csv has no label for b.npy" in msg and "Add a line file,label" in msg
    msg = _error(digits, folder("nolabels", {"a.npy": good}, None))
    assert "no labels.csv" in msg and "a.npy,3" in msg
    msg = _error(digits, folder("badlabel", {"a.npy": good}, "a.npy,seven\n"))
    assert "a.npy" in msg and "'seven'" in msg and "class index" in msg
    msg = _error(digits, folder("empty", {}, None))
    assert "is empty" in msg and "sub-folder per class" in msg
    img = folder("images", {}, None)
    (img / "3").mkdir()
    (img / "3" / "broken.png").write_bytes(b"\x89PNG not really")
    msg = _error(digits, img)
    assert "Cannot read image" in msg and "broken.png" in msg and "Pillow" in msg


def test_a_label_out_of_range_names_the_sample(digits: Evaluated, tmp_path: Path) -> None:
    from backend_core.analyses.accuracy import evaluate, load_eval_set

    write_npy_folder(tmp_path, 2)
    (tmp_path / "labels.csv").write_text("d000.npy,3\nd001.npy,12\n")
    p = digits.programs
    with pytest.raises(BadInputError) as e:
        evaluate(p, load_eval_set(p.loaded, p.example_inputs, str(tmp_path)))
    assert "d001.npy is 12, out of range" in e.value.message and "10 classes (0..9)" in e.value.message
    assert "start at 0" in e.value.hint


def test_regression_targets_and_a_model_without_eval_data(digits: Evaluated, tmp_path: Path) -> None:
    """A label that is a tensor file makes a regression: errors against the target, per model."""
    import torch

    from backend_core.analyses.accuracy import evaluate, load_eval_set

    write_npy_folder(tmp_path, 3)
    for i in range(3):
        np.save(tmp_path / f"t{i}.npy", np.full((1, 10), float(i), np.float32))
    (tmp_path / "labels.csv").write_text("".join(f"d{i:03d}.npy,t{i}.npy\n" for i in range(3)))
    p = digits.programs
    ev = evaluate(p, load_eval_set(p.loaded, p.example_inputs, str(tmp_path)), flips=False)
    assert ev["task"] == "regression"
    with torch.no_grad():
        outs = [p.float_model(s.inputs[0]) for s in load_eval_set(p.loaded, p.example_inputs, str(tmp_path)).samples]
    mae = float(sum((o - i).abs().sum() for i, o in enumerate(outs)) / 30)
    assert ev["models"]["float"]["vs_label"]["mae"] == pytest.approx(mae, rel=1e-5)
    # a source with no get_eval_data() and no --data: the error says what to pass
    from dataclasses import replace

    with pytest.raises(BadInputError) as e:
        load_eval_set(replace(p.loaded, eval_data=None), p.example_inputs)
    assert "get_eval_data()" in e.value.message and "--data DIR" in e.value.hint


def test_an_autoencoder_with_anomaly_labels_gets_reconstruction_error_and_auc(tmp_path: Path) -> None:
    """MLPerf Tiny's deep autoencoder (zoo, random weights): class labels 0/1 on a model whose output has
    its input's shape make an anomaly detector: the reconstruction error is the score."""
    from .conftest import run_eval_job

    rng = np.random.default_rng(0)
    lines = []
    for i in range(8):
        x = rng.uniform(-1, 1, (1, 640)).astype(np.float32) * (3.0 if i % 2 else 1.0)
        np.save(tmp_path / f"s{i}.npy", x)
        lines.append(f"s{i}.npy,{i % 2}")
    (tmp_path / "labels.csv").write_text("\n".join(lines))
    ev = run_eval_job("deep_autoencoder", data=str(tmp_path)).steps["evaluate"]
    assert ev["task"] == "anomaly" and ev["samples"] == 8 and "flips" not in ev
    for k in ("float", "fake_quant", "lowered"):
        m = ev["models"][k]
        assert m["reconstruction_mse"] > 0 and 0.0 <= m["auc"] <= 1.0
    assert ev["outputs"][0]["shape"] == [1, 640] and ev["outputs"][0]["lowered_vs_float"]["rmse"] > 0
    from backend_core.analyses.accuracy.table import summary_lines

    assert "recon MSE" in "\n".join(summary_lines(ev))
