"""A kept report is stored packed (history/packing.py: a node equal to the stage before's is its position
there): what comes back from the store is the report that went in, node for node, in half the bytes;
a store taken back to schema 3 holds every report unpacked, as a schema-3 cmlens reads it; and the
live lowering's snapshots give the same facts as the ones rebuilt from the report."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import sqlalchemy as sa

from backend_core.orchestration.history import Record, open_store
from backend_core.orchestration.history.packing import PACKED, pack_report, unpack_report


def lowered(repo: Path) -> object:
    from backend_core.orchestration.execute.inprocess import run_in_process
    from backend_core.orchestration.jobs import Job, LowerRequest

    return run_in_process(Job(str(repo / "model.py"), LowerRequest(calib=1), steps=("lower", "memory")))


def test_a_kept_report_comes_back_as_it_went_in(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    from backend_core.orchestration.history.record import facts_of, live_snapshots, report_of_result

    repo, commits = model_repo
    res = lowered(repo)
    report = report_of_result(res)
    plain = json.loads(json.dumps(report, default=str))
    packed = pack_report(report)
    shared = sum(isinstance(n, int) for st in packed["stages"] for n in st["nodes"])
    assert shared > 0 and packed[PACKED] == 2                      # unchanged nodes are positions, the rest lean
    assert all("op" not in n for st in packed["stages"] for n in st["nodes"] if isinstance(n, dict))
    assert json.loads(json.dumps(unpack_report(json.loads(json.dumps(packed, default=str))))) == plain
    assert len(json.dumps(packed, default=str)) < 0.75 * len(json.dumps(report, default=str))

    db = tmp_path / "h.db"
    r = Record(model="model.py", name="model", config="k", commit=commits[-1], metrics={"fallbacks": 1},
               versions={"executorch": "1.5.1"})
    with open_store(db) as store:
        store.add(r, report)
        assert store.report("model.py", "k", commits[-1]) == plain
    eng = sa.create_engine(f"sqlite:///{db}")
    with eng.connect() as c:                                        # back to schema 3: written unpacked
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(Path(open_store.__code__.co_filename).with_name("migrations")))
        cfg.attributes["connection"] = c
        command.downgrade(cfg, "0003")
        c.commit()
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0003"
        old = json.loads(gzip.decompress(c.execute(sa.text("SELECT report_gz FROM reports")).scalar()))
    eng.dispose()
    assert PACKED not in old and old == plain

    snaps = live_snapshots(res, report)
    assert snaps is not None
    from backend_core.orchestration.compare.baseline import baseline_dict

    assert baseline_dict(facts_of(report, snaps))["side"] == baseline_dict(facts_of(report))["side"]
