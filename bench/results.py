"""Where a bench's result goes: a record in the project's own history store (one per bench and commit,
model `bench/NAME.py`, config `bench`, the measured figures as its metrics and the README row's three
cells as its extra), then the store's newest record of every bench exported to `bench/results.jsonl`
(the `history export` format), which is committed. `scripts/bench_table.py` writes the README's bench
table from that file, so the table is the benches' own output, never typed.

    from results import publish        # a bench script, at the end of main()
    publish("cache", what="second lowering of mv2 (cache)", result=f"{t:.2f} s", goal="≤ 1 s",
            figures={"second_s": t})

The store is `.cmlens/bench.db` at the repository's root (a folder that ignores itself), or
$CMLENS_BENCH_STORE (a path or a postgresql:// URL)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXPORT = ROOT / "bench" / "results.jsonl"


def store_path() -> str:
    given = os.environ.get("CMLENS_BENCH_STORE")
    if given:
        return given
    folder = ROOT / ".cmlens"
    folder.mkdir(exist_ok=True)
    if not (folder / ".gitignore").exists():
        (folder / ".gitignore").write_text("# cmlens stores: not part of the repository\n*\n")
    return str(folder / "bench.db")


def bench_record(bench: str, *, what: str, result: str, goal: str, figures: dict[str, float],
                 root: Path = ROOT) -> Any:
    """The Record of one bench run at the repository's HEAD (dirty when tracked files differ from it)."""
    from backend_core.orchestration.history.entry import Record
    from backend_core.orchestration.history.git import HeadState
    from backend_core.orchestration.history.record import machine
    from backend_core.common.versions import stack_versions

    head, dirty = HeadState(root).result()
    return Record(model=f"bench/{bench}.py", name=bench, config="bench", commit=head.commit, dirty=dirty,
                  commit_date=head.date, subject=head.subject, branch=head.branch, source="bench",
                  metrics={k: float(v) for k, v in figures.items()}, versions=stack_versions(), machine=machine(),
                  extra={"what": what, "result": result, "goal": goal,
                         "load": f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"})


def export_newest(store: Any, out: Path = EXPORT) -> int:
    """The newest record of each bench, from the store and the committed file together, as JSON lines sorted
    by bench (a stable diff). A store that holds only some benches (a fresh clone's, another machine's) adds
    or replaces their rows and keeps every other bench's committed row."""
    newest: dict[str, tuple[str, str]] = {}
    if out.is_file():
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                newest[row["name"]] = (row.get("recorded_at") or "", line)
    for rec in store.records():
        if rec.config != "bench":
            continue
        row = rec.to_dict()
        when = row.get("recorded_at") or ""
        if rec.name not in newest or when >= newest[rec.name][0]:
            newest[rec.name] = (when, json.dumps(row, sort_keys=True, ensure_ascii=False))
    lines = [newest[name][1] for name in sorted(newest)]
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(out)
    return len(lines)


def publish(bench: str, *, what: str, result: str, goal: str, figures: dict[str, float],
            store: str | None = None, out: Path = EXPORT) -> None:
    """Record this run in the bench store and refresh bench/results.jsonl from it; say where, on stderr."""
    from backend_core.orchestration.history.store import open_store

    rec = bench_record(bench, what=what, result=result, goal=goal, figures=figures)
    with open_store(store or store_path()) as db:
        db.add(rec)
        n = export_newest(db, out)
    print(f"bench result recorded ({rec.short}{' dirty' if rec.dirty else ''}); {out.name}: {n} benches; "
          "README table: python scripts/bench_table.py --write", file=sys.stderr)
