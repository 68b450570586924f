"""The line that made the op, with the calls from the user's own line, in the window's inspector and the
HTML report's (issue 38): a LayerNorm made inside a helper function is put on the helper's line, and the
forward line that called the helper is listed under "called from"."""
from __future__ import annotations


import pytest

MODEL = '''import torch


def normalise(x):
    return torch.nn.functional.layer_norm(x, (16,))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return normalise(self.fc(x))


def get_model():
    return Net().eval()


def get_example_inputs():
    return (torch.randn(1, 16),)
'''


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    model = tmp_path_factory.mktemp("chain") / "net.py"
    model.write_text(MODEL)
    res = execute_job(Job(str(model), LowerRequest(calib=1, use_cache=False)))
    assert res.status == "done", res.error
    final = res.lowering.final
    node = next(n for n in final.nodes if n.kind == "portable_fallback" and "layer_norm" in n.target)
    return final, node


def test_the_op_is_on_the_helpers_line_and_the_chain_names_the_forward(lowered) -> None:
    _final, node = lowered
    assert node.source.file.endswith("net.py") and node.source.line == 5 and "layer_norm" in node.source.code
    assert node.source.chain and "net.py:14 in forward" in node.source.chain[0]


def test_the_inspector_and_the_html_show_the_chain(qtbot, lowered) -> None:
    from app.lowering.inspector import NodeInspector
    from app.lowering.session import LoweringSession
    from app.lowering.view_state import ViewState
    from backend_core.analyses.report.interactive.nodes import node_record

    final, node = lowered
    session = LoweringSession()
    inspector = NodeInspector(session, ViewState(session))
    qtbot.addWidget(inspector)
    html = inspector.node_html(final, node)
    assert "called from" in html and "net.py:14 in forward" in html and "normalise(self.fc(x))" in html
    rec = node_record(final.to_dict()["nodes"][[n.id for n in final.nodes].index(node.id)])
    assert rec["src"][:2] == ["net.py", 5] and rec["chain"][0].startswith("net.py:14 in forward")
