"""Weights computed in forward from parameters only (issue 46): braindecode's max-norm parametrization before
a batch norm fails torchao's conv-batch-norm fusion in prepare_pt2e; weight norm (pytorch-tcn) runs its
pow/sum/div on every inference. The quantizer-stage failure gets a pass failure's treatment (the line, the
cause, --keep-going's value-preserving fold, a reproducer); the weight-norm arithmetic gets its own reason and
a verified fold."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.lowering.lower import LowerHooks

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "computed_weight.py"


def test_folding_keeps_every_value_and_leaves_no_weight_arithmetic() -> None:
    import torch

    from backend_core.stages.fallback.parameter_folding import fold_parameter_computations
    from backend_core.stages.models import load_model, parse_model_source

    m = load_model(parse_model_source(f"{FIXTURE}:weight_norm"))
    ep = torch.export.export(m.module, m.example_inputs)
    folded, _ = fold_parameter_computations(ep)
    ops = lambda p: [str(n.target) for n in p.graph.nodes if n.op == "call_function"]  # noqa: E731
    assert any("_weight_norm" in o for o in ops(ep))
    assert not any("_weight_norm" in o or "pow" in o for o in ops(folded)), ops(folded)
    x = torch.randn(1, 4, 32, generator=torch.Generator().manual_seed(5))
    assert torch.equal(folded.module()(x), m.module(x))          # other inputs than the check's, same values
    assert len(ep.state_dict) == 6 and len(folded.state_dict) == 4      # g and v gone; 2 weights, 2 biases


def test_a_max_norm_conv_before_a_batch_norm_is_diagnosed_kept_going_and_reproduced(tmp_path: Path) -> None:
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.repro import make_repro
    from backend_core.analyses.repro.minimize import run_fresh, same_error

    source = f"{FIXTURE}:max_norm"
    failed = lower_source(source, PipelineOptions(calib=2), use_cache=False)
    assert failed.status == "failed" and failed.error["stage"] == "quantized", failed.error
    f = failed.error["failure"]
    assert f["op"] == "aten.renorm.default" and f["source"] == f"{FIXTURE}:11"       # the line computing it
    assert f["module"] == "conv.parametrizations.weight.0" and f["repro_node"] == "batch_norm"
    assert "reads its weight from aten.renorm.default" in f["cause"] and "same tensor on every" in f["cause"]
    assert f["workaround"] == "fold_parameter_computations"
    assert "torchao's PT2E quantisation" in failed.error["hint"]

    said: list[str] = []
    kept = lower_source(source, PipelineOptions(calib=2, keep_going=True), use_cache=False,
                        hooks=LowerHooks(on_status=said.append))
    assert kept.status == "done", kept.error
    assert list(kept.verdicts["rewrites"]) == ["fold_parameter_computations"]
    assert sum(1 for s in said if s.startswith("--keep-going:")) == 1              # one round for the cause
    assert not kept.fallbacks()                                   # conv + bn + relu all on CMSIS-NN
    from backend_core.stages.fallback.changed import keep_going_summary

    assert f"fold_parameter_computations on a copy of the export (quantized failed; aten.renorm.default at " \
           f"{FIXTURE}:11)" in keep_going_summary(kept.verdicts)

    rep = make_repro(source, PipelineOptions(calib=2), str(tmp_path / "repro.py"), fresh_check=False)
    text = Path(rep.path).read_text()
    assert rep.minimal and rep.lines <= 60 and "backend_core" not in text
    assert rep.expected == "ValueError: Expected get_attr node, got call_function"
    assert same_error(run_fresh(rep.path, rep.expected), rep.expected)


def test_weight_norm_arithmetic_is_a_parameter_computation_and_its_fold_is_verified() -> None:
    from backend_core.lowering.lower.entry import lower

    res = lower(f"{FIXTURE}:weight_norm", PipelineOptions(calib=2), use_cache=False, verify_suggestions=True)
    assert res.status == "done", res.error
    fbs = res.fallbacks()
    param = [n for n in fbs if n.fallback.category == "parameter_computation"]
    assert {n.target.split(".")[1] for n in param} == {"pow", "sum", "div", "mul"}
    assert len(param) == 10 and len(fbs) == 13                    # 2 weight norms of 5 nodes, of 13 fallbacks
    assert all(n.fallback.verified == "verified" for n in param)
    assert "13 → 3 fallback(s)" in param[0].fallback.verification
    assert "unknown" not in {n.fallback.category for n in fbs}


@pytest.mark.skipif(__import__("importlib").util.find_spec("braindecode") is None,
                    reason="needs braindecode: make test installs it into .model-libs (constraints.txt)")
def test_braindecode_eegnet_lowers_with_keep_going() -> None:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    source = str(Path(__file__).resolve().parents[2] / "bench" / "realworld_models3.py") + ":eegnet"
    kept = lower_source(source, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    assert "fold_parameter_computations" in kept.verdicts["rewrites"]
    assert "unknown" not in {n.fallback.category for n in kept.fallbacks()}

