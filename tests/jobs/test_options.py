"""One option grammar (backend_core/orchestration/jobs/options.py): a compare side, a sweep's --vary and a compare's
--vary read the same text as the same value, and refuse the same bad text with the same message."""
from __future__ import annotations

import pytest

from backend_core.orchestration.compare.sides import expand_vary, parse_side
from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.options import parse_vary
from backend_core.orchestration.sweep import parse_vary as sweep_vary


def test_sweep_and_compare_vary_read_the_same_values() -> None:
    texts = ["target=m4,cortex-m55", "channels-last=no,yes", "activations=int8,int16"]
    axes = sweep_vary(texts)
    assert sweep_vary is parse_vary                       # one function, not two grammars
    assert axes == {"target": ["cortex-m4", "cortex-m55"], "channels_last": [False, True],
                    "activations": ["int8", "int16"]}
    sides = expand_vary([parse_side("ds_cnn")], texts)
    assert len(sides) == 8
    assert {s.options["target"] for s in sides} == set(axes["target"])
    assert {s.options["channels_last"] for s in sides} == {False, True}
    side = parse_side("ds_cnn@m4,cl,int16")               # bare values, the same grammar
    assert (side.options["target"], side.options["channels_last"], side.options["activations"]) == \
        ("cortex-m4", True, "int16")


@pytest.mark.parametrize("text, needle", [("flow=legacy,fast", "Unknown flow 'fast'"),
                                          ("channels_last=maybe", "is not yes or no"),
                                          ("target=m4,m99", "m99")])
def test_the_same_bad_value_is_the_same_error(text: str, needle: str) -> None:
    with pytest.raises(BadInputError, match=needle) as a:
        parse_vary([text])
    with pytest.raises(BadInputError, match=needle) as b:
        expand_vary([parse_side("ds_cnn")], [text.replace("=", "=m4,", 0)])
    assert a.value.message == b.value.message


def test_compare_varies_lowering_options_only_and_needs_two_values() -> None:
    with pytest.raises(BadInputError, match="unknown axis 'board'"):
        expand_vary([parse_side("ds_cnn")], ["board=stm32f746,nrf5340"])
    with pytest.raises(BadInputError, match="fewer than two values"):
        expand_vary([parse_side("ds_cnn")], ["target=m4"])
