"""`--rewrite rnn-cells` as a compare side (issue 46 item 6): `MODEL MODEL@rnn-cells` puts the fallbacks of the
model as written beside the rewritten one's (and, with --accuracy and SIDE@profile=RUN.json, accuracy and
instructions beside float's, on the compare's usual road)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.options import parse_bare, parse_value

TINY = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "tiny_rnn.py") + ":lstm"


def test_rewrites_is_a_lowering_option_of_sides_and_sweeps() -> None:
    assert parse_bare("rnn-cells") == ("rewrites", ("rnn-cells",))
    assert parse_value("rewrites", "none") == ()
    with pytest.raises(BadInputError, match="Unknown rewrite 'gru-cells'"):
        parse_value("rewrites", "gru-cells")


def test_compare_the_lstm_as_written_with_its_cells(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "cmp.json"
    assert main(["compare", TINY, f"{TINY}@rnn-cells", "--calib", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(rnn-cells) against [1]" in text and "(as written)" in text
    assert max(len(line) for line in text.splitlines()) < 300      # the decomposed LSTM is counted, not spelled
    data = json.loads(out.read_text())
    assert [s["options"]["rewrites"] for s in data["sides"]] == [[], ["rnn-cells"]]
    delta = data["deltas"][0]
    assert delta["fallbacks_removed"] and not delta["fallbacks_added"]
    assert {f["category"] for f in delta["fallbacks_removed"]} == {"unsupported_module"}


def test_an_op_that_became_hundreds_of_kernels_is_counted_not_listed() -> None:
    from backend_core.orchestration.compare.rows import ops_text

    gru = ["squeeze_copy", "permute_copy"] + ["slice_copy"] * 64 + ["linear", "add", "sigmoid"] * 32 + ["cat"]
    text = ops_text(gru)
    assert text.startswith("163 kernels: slice_copy ×64, linear ×32, add ×32, sigmoid ×32")
    assert len(text) < 120 and "more kind(s)" not in ops_text(["a", "b", "a", "c", "a", "b", "d"])
    assert ops_text(["quantized_linear", "dequantize_per_tensor"]) == "quantized_linear, dequantize_per_tensor"
