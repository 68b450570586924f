"""Calibration kept between --keep-going rounds, so a round that only changes the quantizer's annotation
(ops quarantined) neither calibrates again nor searches the same qparams again.

Why this is exact: prepare_pt2e only inserts observers (identities) into the float graph, so every observer
sees the float values of the nodes it observes, whatever the annotation around them. An observer of the
same nodes with the same configuration (class, dtype, scheme, range) therefore ends calibration in the same
state and computes the same qparams. The memo keys each observer by exactly that; a round whose observers
are all known loads their states and skips calibration, and qparams already computed are handed back
instead of re-running the HistogramObserver's parameter search (the larger share of convert_pt2e on a
MobileOne). It is valid only while the float graph is the same: a round with another set of float rewrites
starts a new memo (`for_graph`)."""
from __future__ import annotations

from typing import Any

Key = tuple[Any, ...]


def _is_observer(mod: Any) -> bool:
    return hasattr(mod, "calculate_qparams") and type(mod).__name__ != "DerivedObserverOrFakeQuantize"


def _observed(node: Any) -> Any:
    """The graph node whose values reach an observer: through the observers before it (an input observer
    reads the output observer's call, whose module name is numbered per round, not the op's)."""
    while node.op == "call_module" and node.args and hasattr(node.args[0], "op"):
        node = node.args[0]
    return node


def observer_keys(prepared: Any) -> dict[str, Key]:
    """{observer module name: (the node names it observes, its configuration)} for every stateful observer."""
    # one observer object may sit at several places under several names (a SharedQuantizationSpec: an
    # activation's input and output); it sees the values of all of them
    seen: dict[int, set[str]] = {}
    targets: dict[str, int] = {}
    for n in prepared.graph.nodes:
        if n.op == "call_module" and n.args and hasattr(n.args[0], "name"):
            mod = prepared.get_submodule(str(n.target))
            if _is_observer(mod):
                targets[str(n.target)] = id(mod)
                seen.setdefault(id(mod), set()).add(_observed(n.args[0]).name)
    keys: dict[str, Key] = {}
    for target, ident in targets.items():
        mod = prepared.get_submodule(target)
        config = (type(mod).__name__, str(getattr(mod, "dtype", "")), str(getattr(mod, "qscheme", "")),
                  getattr(mod, "quant_min", None), getattr(mod, "quant_max", None), getattr(mod, "ch_axis", None))
        keys[target] = (tuple(sorted(seen[ident])), config)
    return keys


class CalibrationMemo:
    """Observer states and qparams of earlier rounds of one lowering, by observer key."""

    def __init__(self) -> None:
        self.graph: Any = None
        self.states: dict[Key, dict[str, Any]] = {}
        self.qparams: dict[Key, Any] = {}
        self.reused = 0             # observers whose calibration the last quantize() took from the memo

    def for_graph(self, graph_id: Any) -> "CalibrationMemo":
        """The memo for the float graph `graph_id` (e.g. the float rewrites applied): emptied when it changed."""
        if graph_id != self.graph:
            self.graph, self.states, self.qparams = graph_id, {}, {}
        return self

    def covers(self, keys: dict[str, Key]) -> bool:
        return bool(keys) and all(k in self.states for k in keys.values())

    def load(self, prepared: Any, keys: dict[str, Key]) -> list[str]:
        """Every observer the memo knows gets the state it ended calibration with in an earlier round, and
        is switched off for this round's calibration (it would see the same values again); returns their names."""
        known = [t for t, k in keys.items() if k in self.states]
        for target in known:
            obs = prepared.get_submodule(target)
            obs.load_state_dict(self.states[keys[target]])
            obs.forward = _identity
        self.reused = len(known)
        return known

    def save(self, prepared: Any, keys: dict[str, Key]) -> None:
        """Remember the states of the observers calibrated this round (and switch the others back on)."""
        for target, key in keys.items():
            obs = prepared.get_submodule(target)
            if obs.__dict__.get("forward") is _identity:
                del obs.forward
                continue
            self.states[key] = {k: v.clone() for k, v in obs.state_dict().items()}

    def memoize_qparams(self, prepared: Any, keys: dict[str, Key]) -> None:
        """convert_pt2e asks each observer for its qparams: answer from the memo when an earlier round
        computed them for the same key, else compute once and remember."""
        for target, key in keys.items():
            obs = prepared.get_submodule(target)
            obs.calculate_qparams = _remembering(self.qparams, key, obs.calculate_qparams)


def _identity(x: Any, *args: Any, **kwargs: Any) -> Any:
    return x


def _remembering(store: dict[Key, Any], key: Key, compute: Any) -> Any:
    def calculate_qparams(*args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return compute(*args, **kwargs)
        if key not in store:
            store[key] = compute()
        return _copy(store[key])
    return calculate_qparams


def _copy(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value.clone() if hasattr(value, "clone") else value
