"""The final (lowered) program's run per sample, with each layer's local error: its kernel
rerun on the fake-quant references of its inputs, and references derived for nodes that have
none of their own. Split from analyze.py: this is the only part that re-executes FX nodes.
"""
from __future__ import annotations

from typing import Any

from backend_core.analyses.numerics.align import LayerPlan, is_alloc, is_getitem
from backend_core.analyses.numerics.capture import Reuse, StageProgram, run_capture
from backend_core.analyses.numerics.tensors import align, align_like, dequant, first_tensor


class FinalRun:
    """Runs the final (lowered) program once per sample and, right after each layer, the same
    kernel again on the fake-quant references of its inputs (the layer's local error). Nodes
    with no reference of their own get one by running their op on their inputs' references."""

    def __init__(self, stage: StageProgram, plans: list[LayerPlan], by_node: dict[str, LayerPlan],
                 fnodes: dict[str, Any], fq_raw: dict[str, Any], float_raw: dict[str, Any],
                 local: bool = True) -> None:
        self.stage, self.plans, self.by_node, self.fnodes = stage, plans, by_node, fnodes
        self.local = local
        self.fq_raw, self.float_raw = fq_raw, float_raw
        self.env: dict[Any, Any] = {}
        self.isolated: dict[str, Any] = {}          # layer -> dequantized local output
        self.derived_fq: dict[str, Any] = {}
        self.derived_float: dict[str, Any] = {}
        self._ref: dict[str, Any] = {}
        self._fref: dict[str, Any] = {}

    def run(self, sample: tuple, reuse: Reuse | None = None) -> Any:
        self._live: dict[Any, Any] = {}
        rec = run_capture(self.stage.program, sample, set(), keep_env=True, after_node=self._after,
                          reuse=reuse)
        self.env = self._live          # keyed by FX node (rec.env is keyed by name)
        for lp in self.plans:
            if lp.reference == "derived":
                self._derive(lp)
        return rec

    # -- references in the final graph's layout -------------------------------------------
    def _after(self, n: Any, value: Any, env: dict) -> None:
        self._live = env
        lp = self.by_node.get(n.name)
        if not self.local or lp is None or lp.reference != "mapped" or lp.fq_point is None:
            return
        changed = False

        def sub(a: Any) -> Any:
            nonlocal changed
            if hasattr(a, "op") and hasattr(a, "name"):
                actual = env[a]
                r = self.ref(a, env)
                if r is not actual and hasattr(r, "dtype") and not _same(r, actual):
                    changed = True
                return r
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a

        args = tuple(sub(a) for a in n.args)
        kwargs = {k: sub(v) for k, v in n.kwargs.items()}
        out = n.target(*args, **kwargs) if changed else value
        self.isolated[n.name] = align(dequant(out, lp.final_point), _shape_of(out))

    def ref(self, node: Any, env: dict) -> Any:
        """The fake-quant value of `node`'s output, shaped like the lowered one."""
        if node.name in self._ref:
            return self._ref[node.name]
        actual = env.get(node)
        r = actual
        lp = self.by_node.get(node.name)
        if lp is not None and lp.reference == "mapped" and lp.fq_point is not None \
                and lp.fq_point.node in self.fq_raw:
            fitted = align_like(self.fq_raw[lp.fq_point.node], actual)
            r = fitted if fitted is not None else actual
        elif is_getitem(node) and node.args[1] == 0 and node.args[0].name in self.by_node:
            r = self.ref(node.args[0], env)
        elif node.op == "call_function" and not is_alloc(node) and node.all_input_nodes:
            r = self._recompute(node, env)
        self._ref[node.name] = r
        return r

    def _recompute(self, node: Any, env: dict) -> Any:
        changed = False

        def sub(a: Any) -> Any:
            nonlocal changed
            if hasattr(a, "op") and hasattr(a, "name"):
                r = self.ref(a, env)
                if r is not env.get(a):
                    changed = True
                return r
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a

        args = tuple(sub(a) for a in node.args)
        kwargs = {k: sub(v) for k, v in node.kwargs.items()}
        if not changed:
            return env.get(node)
        try:
            return node.target(*args, **kwargs)
        except Exception:  # noqa: BLE001 - no reference for this node, keep the lowered value
            return env.get(node)

    def _derive(self, lp: LayerPlan) -> None:
        node = self.fnodes[lp.node]
        r = self.ref(node, self.env)
        if r is not None:
            self.derived_fq[lp.node] = align(dequant(r, lp.final_point), _shape_of(r))
        f = self._float_units(node)
        if f is not None:
            t = first_tensor(f)
            p = lp.final_point
            self.derived_float[lp.node] = ((t - p.zero_point) * p.scale if p.scale is not None
                                           else t).to(t.dtype)

    def _float_units(self, node: Any) -> Any:
        """Float reference of `node` in its integer units (x/scale + zp, unrounded) for integer
        tensors, plain float for float ones; derived nodes run their op on these."""
        import torch

        if node.name in self._fref:
            return self._fref[node.name]
        lp = self.by_node.get(node.name)
        actual = self.env.get(node)
        out: Any = None
        if lp is not None and lp.float_point is not None and lp.float_point.node in self.float_raw:
            t = first_tensor(self.float_raw[lp.float_point.node])
            a = first_tensor(actual)
            t = align(t.to(torch.float32), tuple(a.shape)) if a is not None else None
            if t is not None:
                p = lp.final_point
                out = t / p.scale + p.zero_point if p.scale is not None else t
        elif lp is not None and lp.reference == "derived" and node.all_input_nodes:
            def sub(a: Any) -> Any:
                if hasattr(a, "op") and hasattr(a, "name"):
                    v = self._float_units(a)
                    return v if v is not None else self.env.get(a)
                if isinstance(a, (list, tuple)):
                    return type(a)(sub(x) for x in a)
                return a
            try:
                res = node.target(*(sub(a) for a in node.args),
                                  **{k: sub(v) for k, v in node.kwargs.items()})
                res_t = first_tensor(res)
                out = res_t if res_t is not None and res_t.is_floating_point() else None
            except Exception:  # noqa: BLE001 - the op only takes integers: no float reference
                out = None
        elif is_getitem(node) and node.args[1] == 0:
            out = self._float_units(node.args[0])
        self._fref[node.name] = out
        return out


def _same(a: Any, b: Any) -> bool:
    import torch

    try:
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    except Exception:  # noqa: BLE001
        return False


def _shape_of(v: Any) -> tuple[int, ...]:
    t = first_tensor(v)
    return tuple(t.shape) if t is not None else ()
