"""Shared checks of a failing real-world model: the user's line, --keep-going, the reproducer."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from backend_core.stages.pipeline.stages import PipelineOptions

from .conftest import CALIB, source


def lower(name: str, keep_going: bool = False) -> Any:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    return lower_source(source(name), PipelineOptions(calib=CALIB, keep_going=keep_going), use_cache=False)


def repro(name: str, folder: Path) -> Any:
    from backend_core.analyses.repro import make_repro

    return make_repro(source(name), PipelineOptions(calib=CALIB), str(folder / f"repro_{name}.py"),
                      fresh_check=False)


def check_keep_going(res: Any) -> None:
    """It lowers; every quarantined op is a pass_failure fallback with ExecuTorch's error; no unknown reason;
    the report says it is not plain ExecuTorch's result."""
    assert res.status == "done", res.error
    quarantined = res.verdicts["quarantined"]
    assert quarantined
    cats = [n.fallback.category for n in res.fallbacks()]
    assert "unknown" not in cats
    pf = [n for n in res.fallbacks() if n.fallback.category == "pass_failure"]
    assert pf, cats
    for n in pf:
        assert "not what ExecuTorch produces" in n.fallback.message
        assert next(iter(quarantined.values()))["error"].split(" — ")[0] in n.fallback.message
    assert res.report(with_graphs=False)["options"]["keep_going"] is True


def check_repro_fresh(rep: Any, expected_part: str) -> None:
    """The file: <= 60 lines, no cmlens import, and a fresh Python process fails with the same error."""
    from backend_core.analyses.repro.minimize import run_fresh, same_error

    text = Path(rep.path).read_text()
    assert rep.lines == len(text.splitlines()) <= 60
    assert "cmlens" not in text.split('"""', 2)[-1].replace("cmlens repro", "")     # only the docstring says it
    assert "backend_core" not in text
    assert expected_part in rep.expected
    assert text.rstrip().endswith(f"# Expected: {rep.expected}")
    got = run_fresh(rep.path, rep.expected)
    assert same_error(got, rep.expected), (got, rep.expected, sys.executable)
