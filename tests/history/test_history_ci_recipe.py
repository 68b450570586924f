"""Issue 44, item 2 and the README's CI recipe, run as written: `cmlens lower ... --json lowering.json
--record --history STORE` on main, then on a pull request's branch `cmlens lower ... --json lowering.json`
and `cmlens gate lowering.json --history STORE --branch main --no-new-fallbacks --max-arena +5%`.

A record of `lower --record` carries every figure a backfill record carries (arena, RAM, flash: it exited
2 "the baseline has no memory data" before); a record with fewer figures never replaces a fuller one of
the same commit; a lowering time from the cache is no change. Real lowerings of the tests' small MLP, in a
repository made here with its commits in one second."""
from __future__ import annotations

import json
from pathlib import Path

from backend_core.orchestration.history import Record, changes, open_store

from .conftest import git, model_text
from .helpers import cli

SECOND = "2026-11-21T08:00:00+00:00"
MEMORY = ("arena_bytes", "pte_bytes", "method_allocator_bytes")


def commit(repo: Path, subject: str, width: int = 32, norm: bool = False, readme: bool = False) -> str:
    """A commit of the model (or, `readme`, of the README only: the model lowers as before, from the cache)."""
    if readme:
        (repo / "README.md").write_text(f"{subject}\n")
    else:
        (repo / "model.py").write_text(model_text(width, norm, "v"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject, date=SECOND)
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_readme_ci_recipe_runs_as_written(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "Add the model")
    head = commit(repo, "Document the model", readme=True)
    store = tmp_path / "ci-history.db"
    monkeypatch.chdir(repo)                           # CI runs in the checkout: paths as the README writes them

    code, _out, err = cli("history", "backfill", "model.py", "--last", "1", "--calib", "1", "--executor", "local",
                          "--history", store)
    assert code == 0, err
    with open_store(store, create=False) as s:
        (backfilled,) = [r for r in s.records("model.py") if r.commit == head]
    assert all(k in backfilled.metrics for k in MEMORY), backfilled.metrics

    # on main (after merge): the README's line, lowered, then again from the cache
    for cached in (False, True):
        code, out, err = cli("lower", "model.py", "--calib", "1", "--json", "lowering.json", "--record",
                             "--history", store)
        assert code == 0 and ("(from cache)" in out) == cached, out + err
        with open_store(store, create=False) as s:
            (rec,) = [r for r in s.records("model.py") if r.commit == head]
        assert rec.source == "lower" and rec.extra["from_cache"] == cached
        assert set(backfilled.metrics) <= set(rec.metrics), (backfilled.metrics, rec.metrics)
        assert all(rec.metrics[k] == backfilled.metrics[k] for k in MEMORY)
        assert rec.facts and rec.facts.get("memory")
    code, out, err = cli("history", "show", "model.py", "--history", store)
    assert code == 0, out + err
    assert "—" not in out.split("\n", 3)[3], out                                   # arena and RAM are there

    # on a pull request: a comment only, the gate passes; then a LayerNorm, the gate fails on it
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, "Reword the README", readme=True)
    code, out, err = cli("lower", "model.py", "--calib", "1", "--json", "lowering.json")
    assert code == 0, out + err
    argv = ("gate", "lowering.json", "--history", store, "--branch", "main", "--no-new-fallbacks", "--max-arena", "+5%")
    code, out, err = cli(*argv)
    assert code == 0, out + err
    assert f"main@{head[:8]}" in out, out
    commit(repo, "Add a LayerNorm after fc1", norm=True)
    code, out, err = cli("lower", "model.py", "--calib", "1", "--json", "lowering.json")
    assert code == 0, out + err
    code, out, err = cli(*argv)
    assert code == 1 and "layer_norm" in out, out + err
    code, out2, err = cli(*argv[:4], *argv[6:])                                     # no --branch: main, found
    assert code == 1 and f"main@{head[:8]}" in out2, out2 + err


def test_lowering_time_measured_another_way_is_no_change() -> None:
    """3.65 s in a backfill, then 2.19 s from a cache hit, or lowered alone by `lower --record`: not a change
    of the commit (`show` listed it as -40 %). Two lowerings measured alike still are one."""
    def rec(commit: str, seconds: float, source: str, cached: bool) -> Record:
        return Record(model="m", name="m", config="k", commit=commit * 40, machine="ci (x86_64, 2 cores, Linux)",
                      source=source, metrics={"fallbacks": 0, "lowering_s": seconds}, extra={"from_cache": cached})

    a = rec("a", 3.65, "backfill", False)
    for b in (rec("b", 2.19, "backfill", True), rec("b", 2.19, "lower", False)):
        assert not [c for c in changes([a, b]) if c.metric == "lowering_s"], b
    b = rec("b", 2.19, "backfill", False)            # both lowered, alike: a real change, as before
    assert [c.metric for c in changes([a, b])] == ["lowering_s"]


def test_a_record_with_fewer_figures_never_replaces_a_fuller_one(tmp_path: Path) -> None:
    """A backfill's record of a commit has the memory figures; a later record of the same lowering without
    them (`history add` of a JSON without memory, a step without it) keeps them; another lowering at the
    commit (figures that differ: a dirty tree) replaces it."""
    full = Record(model="m.py", name="m", config="k", commit="c" * 40, source="backfill",
                  metrics={"fallbacks": 1, "pte_bytes": 9000, "arena_bytes": 288, "method_allocator_bytes": 1200,
                           "lowering_s": 3.65}, facts={"memory": {"arena": 288}})
    less = Record(model="m.py", name="m", config="k", commit="c" * 40, source="lower",
                  metrics={"fallbacks": 1, "pte_bytes": 9000, "lowering_s": 2.19})
    other = Record(model="m.py", name="m", config="k", commit="c" * 40, source="lower", dirty=True,
                   metrics={"fallbacks": 2, "pte_bytes": 9400})
    with open_store(tmp_path / "h.db") as s:
        s.add(full)
        s.add(less)
        kept = s.get("m.py", "k", "c" * 40)
        assert kept.source == "lower" and kept.metrics["lowering_s"] == 2.19
        assert kept.metrics["arena_bytes"] == 288 and kept.metrics["method_allocator_bytes"] == 1200
        assert kept.facts == {"memory": {"arena": 288}}
        assert kept.extra["kept_from"]["source"] == "backfill"
        s.add(other)
        assert s.get("m.py", "k", "c" * 40).metrics == other.metrics
    assert json.dumps(kept.to_dict())
