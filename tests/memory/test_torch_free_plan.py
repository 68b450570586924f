"""A memory report is read from the .pte without importing torch when it can be (ExecuTorch's own
flatbuffer reader with exir's __init__ skipped): reopening a cached lowering in the window then takes
under a second instead of ExecuTorch's ~8 s import. Both readers must give the same plan."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from backend_core.target.memory.plan import read_plan

from .conftest import lowered_program

REPO = Path(__file__).resolve().parents[2]

_READ_TORCH_FREE = """
import dataclasses, json, sys
from backend_core.target.memory.plan import read_plan
plan = read_plan(open(sys.argv[1], "rb").read())
print(json.dumps({"torch_imported": "torch" in sys.modules, "plan": dataclasses.asdict(plan)}, default=str))
"""


def _as_json(obj: object) -> object:
    return json.loads(json.dumps(obj, default=str))


def test_the_torch_free_reader_gives_the_plan_executorchs_deserialiser_gives(tmp_path: Path) -> None:
    low = lowered_program("ds_cnn")                      # constants in a segment, several buffers
    pte = tmp_path / "model.pte"
    pte.write_bytes(low.pte)
    full = read_plan(low.pte)                            # torch is imported here: the full deserialiser
    out = subprocess.run([sys.executable, "-c", _READ_TORCH_FREE, str(pte)], cwd=REPO, capture_output=True,
                         text=True, timeout=120, check=True)
    fast = json.loads(out.stdout.strip().splitlines()[-1])
    assert fast["torch_imported"] is False
    assert fast["plan"] == _as_json(dataclasses.asdict(full))
    assert full.constant_bytes > 0 and len(full.buffer_sizes) > 1


def test_a_cached_lowering_with_its_memory_report_imports_no_torch(tmp_path: Path) -> None:
    """The window's lowering Job (lower + memory) in the job worker on a cache hit: the snapshots and the
    memory section, no ExecuTorch."""
    from backend_core.orchestration.jobs import Job, LowerRequest

    job = json.dumps(Job("ds_cnn", LowerRequest(), steps=("lower", "memory")).to_dict()) + "\n"
    args = [sys.executable, "-X", "importtime", "-m", "backend_core.orchestration.workers.job"]
    runs = [subprocess.run(args, input=job, cwd=REPO, capture_output=True, text=True, timeout=300) for _ in range(2)]
    results = [json.loads(line)["job_result"]["steps"] for r in runs for line in r.stdout.splitlines()
               if '"type": "result"' in line]
    assert [r["lower"]["from_cache"] for r in results] in ([False, True], [True, True])
    assert results[0]["memory"] == results[1]["memory"] and results[1]["memory"]["arena_bytes"] > 0
    imported = {line.split("|")[-1].strip() for line in runs[1].stderr.splitlines() if line.startswith("import time:")}
    assert "torch" not in imported and "executorch.exir" not in imported, sorted(m for m in imported if "torch" in m)[:5]
