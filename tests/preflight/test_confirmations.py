"""Every "will fail" rule rests on a real failure: its confirming case fires the rule and its recorded
QEMU run (tests/fixtures/uart/, written by bench/preflight_fixtures.py) failed at that very check; its
near miss does not fire and its recorded run PASSed. A rule without a case says only "may fail"."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend_core.common.finding import MAY_FAIL, WILL_FAIL, Finding
from backend_core.analyses.preflight import certain, check_snapshot
from backend_core.analyses.preflight.rules import RULES, settle
from tests.preflight.test_preflight_rules import lowered

REPO = Path(__file__).resolve().parents[2]
CONFIRMED = sorted(r.id for r in RULES.values() if r.confirmed)


def _source(model: str) -> str:
    """`tests/preflight/models/x.py:entry (note)` -> an absolute model source."""
    return str(REPO / model.split(" (")[0])


def _uart(path: str) -> str:
    return (REPO / path).read_text()


@pytest.mark.parametrize("rule_id", CONFIRMED)
def test_the_recorded_run_failed_at_the_rules_check(rule_id: str) -> None:
    r = RULES[rule_id]
    text = _uart(r.confirmed_by)
    assert r.shows in text, f"{r.confirmed_by} does not show {r.shows!r}"
    assert "Test_result: PASS" not in text
    near = _uart(r.near_miss_uart)
    assert "Test_result: PASS" in near and r.shows not in near


def _registry_without(tmp_path: Path, op: str) -> Path:
    """A copy of the installed kernel YAMLs without `op`: a checkout that lacks its kernel."""
    import executorch

    from backend_core.target.build.ops import OP_YAMLS

    wheel = Path(next(iter(executorch.__path__)))
    for rel in OP_YAMLS.values():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wheel / rel, tmp_path / rel)
    yaml = tmp_path / OP_YAMLS["portable"]
    text = yaml.read_text()
    start = text.index(f"- op: {op.split('::')[1].removeprefix('aten::')}")
    end = text.index("- op:", start + 5)
    yaml.write_text(text[:start] + text[end:])
    return tmp_path


def _findings(rule_id: str, source: str, tmp_path: Path, near: bool = False) -> list[Finding]:
    res = lowered(source)
    if rule_id == "missing-kernel":
        root = _registry_without(tmp_path, "aten::native_layer_norm.out") if not near else None
        return check_snapshot(res.final, program=res.blobs["model.pte"], et_root=root)
    if rule_id == "bundle-output-dim-order" and not near:
        from tests.preflight.test_preflight_rules import stock_bundle

        return check_snapshot(res.final, bundle=stock_bundle(res))
    return res.preflight


@pytest.mark.parametrize("rule_id", [r for r in CONFIRMED if r != "kernel-not-selected"])
def test_the_confirming_case_fires_and_the_near_miss_does_not(rule_id: str, tmp_path: Path) -> None:
    r = RULES[rule_id]
    found = [f for f in certain(_findings(rule_id, _source(r.case), tmp_path)) if f.rule == rule_id]
    assert found, f"{rule_id} does not fire on {r.case}"
    f = found[0]
    assert f.certainty == WILL_FAIL and f.confirmed_by == r.confirmed_by and f.check == r.check
    near = _findings(rule_id, _source(r.near_miss), tmp_path, near=True)
    assert certain(near) == [], [x.line() for x in near]


def test_a_rule_without_a_confirming_case_only_warns() -> None:
    f = Finding("n", "unsupported-dtype", "m", "fix", certainty=WILL_FAIL)
    assert settle(f).certainty == MAY_FAIL and settle(f).confirmed_by == ""
    assert settle(Finding("n", "a-rule-nobody-wrote", "m", "fix", certainty=WILL_FAIL)).certainty == MAY_FAIL
    assert settle(Finding("n", "dim-order-mismatch", "m", "fix", certainty=WILL_FAIL)).confirmed_by.endswith(
        "preflight_softmax_dim_order_mps3-an547.txt")
    for r in RULES.values():
        assert r.confirmed or r.note, f"{r.id}: say why it has no confirming case"
        if r.confirmed:
            assert (REPO / r.confirmed_by).is_file() and (REPO / r.near_miss_uart).is_file()
            assert (REPO / r.case.split(" (")[0].split(":")[0]).is_file()
