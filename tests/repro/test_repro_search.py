"""How `cmlens repro` chooses the nodes it keeps (backend_core.analyses.repro.search), on the float export of the
windowed-attention fixture (efficientvit_m0's pattern), with a stated failure condition in place of a
lowering so each case runs in milliseconds. The real lowering of that fixture is checked opt-in
(test_efficientvit.py): it takes minutes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend_core.analyses.repro.codegen import subgraph_source
from backend_core.analyses.repro.search import delta_shrink, grow_ancestors, narrow_window

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "windowed_attention.py"


@pytest.fixture(scope="module")
def graph() -> Any:
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("windowed_attention", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, inputs = mod.model()
    return torch.export.export(model, inputs)


def _node(ep: Any, target: str, nth: int = 0) -> Any:
    return [n for n in ep.graph.nodes if n.op == "call_function" and str(n.target) == target][nth]


def test_a_failure_that_needs_a_far_upstream_op_is_reduced_to_exactly_what_it_needs(graph: Any) -> None:
    """The efficientvit case: the bmm fails only when the squeeze-excite multiply, 15 ops upstream, is in
    the file. Producers up to depth 6 cannot reach it; the window search and delta debugging keep the
    multiply, the bmm and the path between them, and nothing else."""
    fail = _node(graph, "aten.matmul.default")
    mul = _node(graph, "aten.mul.Tensor")
    path = _path(mul, fail)
    tried: list[int] = []

    def reproduces(keep: set[str]) -> bool:
        tried.append(len(keep))
        return path <= keep

    assert grow_ancestors(fail, 6, reproduces) is None
    window = narrow_window(fail, reproduces)
    assert window is not None and path <= window
    order = [n.name for n in graph.graph.nodes]
    assert order.index(min(window, key=order.index)) == order.index(mul.name), "the window starts at the multiply"
    assert delta_shrink(fail, window, reproduces) == path
    assert len(tried) < 80, tried


def test_a_failure_that_needs_an_op_downstream_is_searched_on_the_whole_graph(graph: Any) -> None:
    """When the ops up to the failing one are not enough (here: it also needs the op after it, as a failure
    that depends on a user would), the whole graph is tried and the window's end is narrowed too."""
    order = [n for n in graph.graph.nodes if n.op == "call_function"]
    fail = order[len(order) // 2]
    after = order[order.index(fail) + 1]
    tried: list[int] = []

    def reproduces(keep: set[str]) -> bool:
        tried.append(len(keep))
        return {fail.name, after.name} <= keep

    assert narrow_window(fail, reproduces) == {fail.name, after.name}
    assert tried[:2] == [order.index(fail) + 1, len(order)], "the prefix first, then the whole graph"


def test_a_local_failure_keeps_the_cheap_ancestor_search(graph: Any) -> None:
    """A failure of the op and its direct producer is found at depth 1 and never tries the whole graph."""
    fail = _node(graph, "aten.matmul.default")
    need = {fail.name, fail.args[1].name}
    total = sum(1 for n in graph.graph.nodes if n.op == "call_function")
    tried: list[int] = []

    def reproduces(keep: set[str]) -> bool:
        tried.append(len(keep))
        return need <= keep

    assert grow_ancestors(fail, 6, reproduces) == need
    assert max(tried) < total


def test_a_kept_node_downstream_of_nothing_is_returned_so_export_keeps_it(graph: Any) -> None:
    """A kept op that no kept op uses (a sibling of the failing one) is an output of the file: without it,
    torch.export drops it as dead code and the file no longer holds what the failure needed."""
    fail = _node(graph, "aten.matmul.default")
    split = fail.args[1].args[0].args[0]            # flatten <- getitem <- split_with_sizes
    sibling = next(u for u in split.users if u.args[1] == 2)        # v: not used by the failing op
    text = subgraph_source(graph, {fail.name, sibling.name, split.name}, fail.name, header="h",
                           target="cortex-m55", expected="E: x", versions={})
    ret = next(ln for ln in text.splitlines() if ln.strip().startswith("return "))
    assert ret.strip().startswith("return out, ") and len(ret.split(",")) == 2, ret


def _path(src: Any, dst: Any) -> set[str]:
    """Names of the nodes on every path from `src` to `dst` (both included)."""
    down: set[str] = set()
    todo = [src]
    while todo:
        n = todo.pop()
        if n.name not in down:
            down.add(n.name)
            todo.extend(n.users)
    up: set[str] = set()
    todo = [dst]
    while todo:
        n = todo.pop()
        if n.name not in up:
            up.add(n.name)
            todo.extend(n.all_input_nodes)
    return down & up
