"""Load a model file as `python model.py` runs it, and record what the result depends on.

Python puts a script's folder first on sys.path, so a model split over files (`from helper import
Block`, a package beside it) imports; cmlens does the same while the file loads (in the worker process).
While it loads, every module imported from outside the standard library / site-packages and every data
file opened for reading is recorded with a content hash: the result cache stores that list and checks
it on every hit (backend_core.stages.cache), so an edited helper is a miss that names the file, not a stale
answer. Modules recorded by an earlier load are dropped from sys.modules first: a process that loads a
model twice (tests, a long-lived caller) imports the edited helper, not the copy from the first load."""
from __future__ import annotations

import hashlib
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

__all__ = ["Dependency", "LoadRecorder", "file_digest", "folder_digest", "describe_changes", "module_attr",
           "search_path_text"]


@dataclass(frozen=True)
class Dependency:
    """A file the result was made from: `path` absolute, `name` as the user reads it (relative to the
    model's folder when inside it), `kind` "model" | "module" | "data", `sha256` of its bytes; or
    `kind` "folder": a folder whose list of sample files (`sha256` of their names) made the result."""

    path: str
    name: str
    kind: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "name": self.name, "kind": self.kind, "sha256": self.sha256}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Dependency":
        return Dependency(str(d["path"]), str(d.get("name") or d["path"]), str(d.get("kind", "module")),
                          str(d["sha256"]))

    def change(self) -> str | None:
        """None when the file still has these bytes; else "helper.py changed" / "... was deleted".
        Content, not the modification time: touching a file without changing it keeps the hit."""
        try:
            digest = folder_digest(self.path) if self.kind == "folder" else file_digest(self.path)
        except FileNotFoundError:
            return f"{self.name} was deleted"
        except OSError as e:
            return f"{self.name} cannot be read ({e.strerror or e})"
        if digest == self.sha256:
            return None
        return f"the files in {self.name} changed" if self.kind == "folder" else f"{self.name} changed"


def file_digest(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_digest(path: str | Path, suffixes: tuple[str, ...] = (".pt", ".npy")) -> str:
    """Hash of the names of a folder's sample files: an added or removed sample changes it."""
    names = sorted(f.name for f in Path(path).iterdir() if f.suffix in suffixes)
    return hashlib.sha256("\0".join(names).encode()).hexdigest()


def describe_changes(reasons: list[str]) -> str:
    """"helper.py changed", "helper.py changed, weights.pt was deleted", "5 files changed … (a, b, c, …)"."""
    if len(reasons) <= 3:
        return ", ".join(reasons)
    return f"{len(reasons)} files changed or were deleted ({', '.join(reasons[:3])}, …)"


def _library_roots() -> tuple[str, ...]:
    """Folders whose files do not change between runs except by a (re)install, which the cache keys
    on through the package versions: the standard library, site-packages, and cmlens itself (its own
    sources are in the cache key as code_fingerprint)."""
    roots: set[str] = set()
    paths = sysconfig.get_paths()
    for k in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(k):
            roots.add(paths[k])
    for p in [*getattr(site, "getsitepackages", lambda: [])(), site.getusersitepackages()]:
        roots.add(p)
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    pkg = Path(__file__).resolve().parents[2]            # backend_core/
    roots.update({str(pkg), str(pkg.parent / "app")})
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


_SYSTEM = ("/proc/", "/sys/", "/dev/")
_NOT_DATA = (".py", ".pyc", ".pyi", ".so", ".pth")


class _OpenHook:
    """One audit hook per process (hooks cannot be removed): while a recorder is active it collects
    the files opened for reading. Inactive, it returns at once."""

    installed = False
    active: list["LoadRecorder"] = []

    @classmethod
    def install(cls) -> None:
        if not cls.installed:
            sys.addaudithook(cls._hook)
            cls.installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        if event != "open" or not cls.active:
            return
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if isinstance(mode, str):
            if any(c in mode for c in "wax+"):
                return
        elif isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, str) and path:
            cls.active[-1].opened.append(os.path.abspath(path))


_previous_loads: set[str] = set()     # module names a LoadRecorder recorded in this process


def module_attr(mod: object, name: str) -> Any:
    """`mod.name` as the module's own namespace holds it, or None, without running the module's
    `__getattr__`: libraries put lazy placeholders in sys.modules (speechbrain's LazyModule) whose
    attribute lookup imports the real module, and an import the user's code never made can fail
    (speechbrain.integrations.k2_fsa needs k2). Looking at a module must not import it (issue 46)."""
    try:
        namespace = object.__getattribute__(mod, "__dict__")
    except (AttributeError, TypeError):
        return None
    return namespace.get(name) if isinstance(namespace, dict) else None


class LoadRecorder:
    """`with LoadRecorder(path) as rec: ...import and build the model...`; then `rec.dependencies()`.

    Inside: the file's folder is first on sys.path (as `python model.py` has it), user modules from an
    earlier load are forgotten, and opened files are collected. sys.path is restored on exit."""

    def __init__(self, model_path: str | Path, kind: str = "model") -> None:
        self.model_path = os.path.realpath(model_path)
        self.folder = os.path.dirname(self.model_path)
        self.kind = kind
        self.opened: list[str] = []
        self._before: set[str] = set()
        self._modules: list[str] = []
        self.search_path: list[str] = []

    def __enter__(self) -> "LoadRecorder":
        for name in list(_previous_loads):
            sys.modules.pop(name, None)
        _previous_loads.clear()
        sys.path.insert(0, self.folder)
        self.search_path = list(sys.path)
        self._before = set(sys.modules)
        _OpenHook.install()
        _OpenHook.active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _OpenHook.active.remove(self)
        try:
            sys.path.remove(self.folder)       # the first occurrence: the one inserted above
        except ValueError:
            pass
        roots = _library_roots()
        for name, mod in list(sys.modules.items()):
            f = module_attr(mod, "__file__") if name not in self._before and mod is not None else None
            if isinstance(f, str) and f and not os.path.realpath(f).startswith(roots):
                self._modules.append(os.path.realpath(f))
                _previous_loads.add(name)     # forgotten by the next load, so an edit is imported

    def _display(self, path: str) -> str:
        return os.path.relpath(path, self.folder) if path.startswith(self.folder + os.sep) else path

    def _files(self) -> Iterator[tuple[str, str]]:
        yield self.model_path, self.kind
        for f in self._modules:
            yield f, "module"
        for f in self.opened:
            # sources read by linecache/inspect (tracebacks, torch's source lookups) and package metadata
            # (importlib.metadata scans) are not data the model was made from
            if f.endswith(_NOT_DATA) or ".dist-info" + os.sep in f or ".egg-info" + os.sep in f:
                continue
            yield os.path.realpath(f), "data"

    def dependencies(self) -> list["Dependency"]:
        """Every recorded file outside the library folders, model file first, each once."""
        roots = _library_roots()
        seen: dict[str, Dependency] = {}
        for path, kind in self._files():
            if path in seen or path.startswith(roots) or path.startswith(_SYSTEM) or "__pycache__" in path:
                continue
            if not os.path.isfile(path):
                continue
            try:
                seen[path] = Dependency(path, self._display(path), kind, file_digest(path))
            except OSError:
                continue
        return list(seen.values())


def search_path_text(search_path: list[str], missing: str, folder: str) -> str:
    """The folders Python searched for `missing`, as a sentence: the model's folder named as such,
    then the others (the parent package's folder for a submodule)."""
    parent = missing.rpartition(".")[0]
    places: list[str] = []
    pkg = sys.modules.get(parent) if parent else None
    pkg_path = module_attr(pkg, "__path__") if pkg is not None else None
    if pkg_path:
        places = [f"{p} (package {parent})" for p in pkg_path]
    else:
        for p in search_path:
            if p == folder:
                places.append(f"{p} (the model's folder)")
            elif p and (os.path.isdir(p) or os.path.isfile(p)):
                places.append(p)
    return ", ".join(places)
