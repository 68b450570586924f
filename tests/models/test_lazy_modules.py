"""Loading a model never imports a module the user's code did not import (issue 46): libraries put lazy
placeholders in sys.modules (speechbrain's LazyModule) whose attribute lookup imports the real module, and
that import can fail (speechbrain.integrations.k2_fsa needs k2). The load recorder used to read
`getattr(mod, "__file__")` of every new module, so `cmlens lower` of a speechbrain ECAPA-TDNN died with a
traceback and no JSON."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend_core.stages.models import load_model, parse_model_source

ROOT = Path(__file__).resolve().parents[2]

# speechbrain's pattern, in a few lines: a ModuleType whose missing attributes import the target
LAZY = '''
import importlib, sys, types


class Lazy(types.ModuleType):
    def __init__(self, name, target):
        super().__init__(name)
        self.target, self.loaded = target, None

    def __getattr__(self, attr):
        try:
            self.loaded = importlib.import_module(self.target)
        except Exception as e:
            raise ImportError(f"Lazy import of {self.target} failed") from e
        return getattr(self.loaded, attr)


def plant(name):
    sys.modules[name] = Lazy(name, "a_module_nobody_installed")
'''


def _model(tmp_path: Path, body: str) -> Path:
    (tmp_path / "lazyutil.py").write_text(LAZY)
    src = tmp_path / "model.py"
    src.write_text("import sys\nimport torch\nimport lazyutil\n" + body + "\n\n"
                   "def get_model():\n    return torch.nn.Linear(4, 2)\n\n\n"
                   "def get_example_inputs():\n    return (torch.randn(1, 4),)\n")
    return src


def test_a_lazy_placeholder_the_model_never_used_is_left_alone(tmp_path: Path) -> None:
    src = _model(tmp_path, 'lazyutil.plant("lazy_integration_k2")')
    try:
        loaded = load_model(parse_model_source(str(src)))
        assert {d.name for d in loaded.dependencies} == {"model.py", "lazyutil.py"}
        assert sys.modules["lazy_integration_k2"].__dict__["loaded"] is None    # never imported
    finally:
        sys.modules.pop("lazy_integration_k2", None)


def test_the_missing_module_message_reads_a_lazy_parent_without_importing_it(tmp_path: Path) -> None:
    """search_path_text names the parent package's folders from its namespace, not through the
    placeholder's __getattr__ (which would raise the library's ImportError instead of the message)."""
    from backend_core.stages.models.dependencies import search_path_text

    sys.path.insert(0, str(tmp_path))
    (tmp_path / "lazyutil.py").write_text(LAZY)
    try:
        import lazyutil

        lazyutil.plant("lazy_parent")
        text = search_path_text([str(tmp_path)], "lazy_parent.sub", str(tmp_path))
        assert text == f"{tmp_path} (the model's folder)"
        assert sys.modules["lazy_parent"].__dict__["loaded"] is None
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("lazy_parent", "lazyutil"):
            sys.modules.pop(name, None)


@pytest.mark.skipif(importlib.util.find_spec("speechbrain") is None,
                    reason="needs speechbrain: make test installs it into .model-libs (constraints.txt)")
def test_speechbrain_ecapa_tdnn_loads(tmp_path: Path) -> None:
    """The real library, in a fresh process (its lazy placeholders are fresh there)."""
    code = ("import sys\nfrom backend_core.stages.models import load_model, parse_model_source\n"
            f"m = load_model(parse_model_source({str(ROOT / 'bench' / 'realworld_models3.py')!r} + ':ecapa_tdnn'))\n"
            "print(type(m.module).__name__, [d.name for d in m.dependencies])\n"
            "print('k2 loaded:', sys.modules['speechbrain.k2_integration'].__dict__['lazy_module'] is not None)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ECAPA_TDNN ['realworld_models3.py'" in p.stdout       # (a library on PYTHONPATH is recorded too)
    assert "k2 loaded: False" in p.stdout
