"""Accuracy on every face, real ExecuTorch: `cmlens gate --min-accuracy` (exit 1 past the limit, 0 within it),
the accuracy row of `cmlens compare`, and the sweep's calib / top-1 columns. digits_cnn on its first 60
held-out images: with its own calibration 0 flips there, with one random image (calib=1) several."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.cli import main

LIMIT = "60"


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two gate baselines with accuracy: digits_cnn as shipped, and calibrated on one random image (that
    one written by the gate that failed it: --baseline, --min-accuracy and --write-baseline at once)."""
    d = tmp_path_factory.mktemp("acc-gate")
    good, bad = d / "good.json", d / "bad.json"
    assert main(["gate", "digits_cnn", "--accuracy", LIMIT, "--write-baseline", str(good)]) == 0
    code = main(["gate", "digits_cnn", "--calib", "1", "--accuracy", LIMIT, "--baseline", str(good),
                 "--min-accuracy", "-0.5", "--write-baseline", str(bad), "--json", str(d / "gate.json")])
    return {"good": good, "bad": bad, "gate_json": d / "gate.json", "code": code}   # type: ignore[dict-item]


def test_gate_fails_on_an_accuracy_drop_past_the_limit(baselines, capsys) -> None:
    assert baselines["code"] == 1
    gate = json.loads(baselines["gate_json"].read_text())
    check = next(c for c in gate["checks"] if c["name"] == "accuracy")
    good = json.loads(baselines["good"].read_text())["side"]["accuracy"]
    bad = json.loads(baselines["bad"].read_text())["side"]["accuracy"]
    g, b = 100 * good["models"]["lowered"]["top1"], 100 * bad["models"]["lowered"]["top1"]
    assert not check["ok"] and f"top-1 accuracy (lowered, 60 samples) {g:.2f} % -> {b:.2f} %" in check["message"]
    assert f"limit -0.5 points (at least {g - 0.5:.2f} %)" in check["message"]
    assert any("prediction(s) flipped" in x for x in check["details"])
    assert any("flip(s) start at" in x and "digits.py:" in x for x in check["details"])   # the layer and the line
    assert good["samples"] == bad["samples"] == 60 and good["flips"] == 0 and bad["flips"] >= 2
    assert bad["models"]["lowered"]["top1"] < good["models"]["lowered"]["top1"] - 0.005


def test_gate_passes_within_the_limit_and_fails_past_it(baselines, capsys) -> None:
    """The calib=1 result (a baseline file as the result: no lowering) against the shipped one."""
    drop = 100 * (json.loads(baselines["good"].read_text())["side"]["accuracy"]["models"]["lowered"]["top1"]
                  - json.loads(baselines["bad"].read_text())["side"]["accuracy"]["models"]["lowered"]["top1"])
    within = f"-{drop + 0.1:.2f}"
    assert main(["gate", str(baselines["bad"]), "--baseline", str(baselines["good"]), "--min-accuracy", within]) == 0
    out = capsys.readouterr().out
    assert "ok    top-1 accuracy (lowered, 60 samples)" in out and "No regression." in out
    assert main(["gate", str(baselines["bad"]), "--baseline", str(baselines["good"]),
                 "--min-accuracy", f"-{drop - 0.1:.2f}"]) == 1
    assert "FAIL  top-1 accuracy" in capsys.readouterr().out
    # a result without accuracy cannot be gated on it: exit 2 with the fix, never a silent pass
    plain = baselines["good"].parent / "plain.json"
    data = json.loads(baselines["good"].read_text())
    data["side"]["accuracy"] = None
    plain.write_text(json.dumps(data))
    assert main(["gate", str(plain), "--baseline", str(baselines["good"]), "--min-accuracy", "-0.5"]) == 2
    err = capsys.readouterr().err
    assert "--min-accuracy: the result has no accuracy data" in err and "--accuracy N" in err


def test_compare_has_an_accuracy_row(baselines, capsys) -> None:
    good = json.loads(baselines["good"].read_text())["side"]["accuracy"]
    bad = json.loads(baselines["bad"].read_text())["side"]["accuracy"]
    out_json = baselines["good"].parent / "cmp.json"
    assert main(["compare", str(baselines["good"]), str(baselines["bad"]), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    g, b = 100 * good["models"]["lowered"]["top1"], 100 * bad["models"]["lowered"]["top1"]
    assert any(x.strip().startswith("accuracy (") for x in out.splitlines())
    f = 100 * good["models"]["float"]["top1"]
    assert (f"accuracy (60 samples, get_eval_data() of zoo entry digits_cnn): top-1 float {f:.2f} %, lowered {g:.2f} %"
            f" -> {b:.2f} %") in " ".join(out.split())
    # the values beside the predictions: calibrating on one random image costs output SQNR against float
    sq_good, sq_bad = good["output_sqnr_db"], bad["output_sqnr_db"]
    assert sq_bad < sq_good and f"output SQNR vs float {sq_good:.1f} -> {sq_bad:.1f} dB" in " ".join(out.split())
    assert f"({b - g:+.2f} points)" in out and f"flips 0 -> {bad['flips']}" in out
    assert "[2]'s flips start most at" in out
    d = json.loads(out_json.read_text())["deltas"][0]["accuracy"]
    assert d["same_data"] and d["top1"]["delta"] == pytest.approx(b - g, abs=1e-3) and d["flips"]["value"] == bad["flips"]


def test_sweep_has_calib_and_top1_columns(tmp_path: Path, qtbot) -> None:
    """`cmlens sweep digits_cnn --steps lower,evaluate --vary calib=random:1,model:8`: the dashboard, the
    baselines and the window's Sweep table show calib and top-1; the calib=1 cell is marked when int8 lost
    more than half a point to float."""
    out = tmp_path / "sweep"
    assert main(["sweep", "digits_cnn", "--steps", "lower,evaluate", "--vary", "calib=random:1,model:8",
                 "--eval-limit", "40", "--workers", "1", "--out", str(out)]) == 0
    from backend_core.orchestration.sweep.dashboard import COLUMNS

    keys = [k for k, _ in COLUMNS]
    assert {"calib", "top1", "flips"} <= set(keys)
    html = (out / "dashboard.html").read_text()
    data = json.loads(html.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    rows = {r["calib"]: r for r in data["rows"]}
    assert set(rows) == {"1", "model:8"}
    assert all(r["status"] == "done" and isinstance(r["top1"], float) for r in rows.values())
    assert rows["1"]["top1"] < rows["1"]["float_top1"] and rows["1"]["flips"] >= 1
    results = [json.loads(p.read_text()) for p in (out / "results").glob("*.json")]
    assert sorted(r["summary"]["top1"] for r in results) == sorted(r["top1"] for r in rows.values())
    base = json.loads((out / "baseline.json").read_text())
    assert all(c["baseline"]["side"]["accuracy"]["samples"] == 40 for c in base["cells"].values())

    from app.sweep.model import SweepTableModel, is_bad, read_sweep
    from app.sweep.view import SweepView

    table_rows, _ = read_sweep(out)
    model = SweepTableModel(table_rows)
    col = keys.index("top1")
    for i, row in enumerate(table_rows):
        assert model.data(model.index(i, col)) == f"{row['top1']:.2f}"
        assert is_bad("top1", row) == (row["top1"] < row["float_top1"] - 0.5)
    assert is_bad("top1", next(r for r in table_rows if r["calib"] == "1"))
    view = SweepView()
    qtbot.addWidget(view)
    view.open_folder(out)
    assert not view.table.isColumnHidden(col) and not view.table.isColumnHidden(keys.index("calib"))
