"""On-disk cache of lowering results, so lowering the same model again returns in well under a second.

Never a stale answer: the key covers the model source's identity (zoo name, or file kind + path +
entry), the options, the installed stack (versions and the content of each package's RECORD, or its
sources when installed editable) and this package's code. The content of the model file and of every
file it imported or read while loading is not in the key but stored with the entry (deps.json) and
checked on every hit: a changed file is a miss that says which one ("helper.py changed"), a file
touched without a change keeps the hit. docs/architecture.md ("Caches") lists every cache and its key."""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.stages.models.dependencies import Dependency, describe_changes

FORMAT_VERSION = "7"     # 7: repeated per-channel lists stored once; 6: the payload is JSON (result.json),
                         # never pickle; 5: entries carry deps.json
DEPS_FILE = "deps.json"
PAYLOAD_FILE = "result.json"
_OLD_PAYLOADS = ("result.pickle",)   # never read: loading a pickle from a shared cache runs its code


def cache_root() -> Path:
    root = os.environ.get("CMLENS_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cmlens"


# Code that does not shape a lowering result: editing it must not invalidate the cache. Everything else
# in backend_core (models, pipeline, snapshot, fallback, preflight, lowering, ...) is in the key.
_NOT_IN_RESULTS = ("target/toolchain", "target/build", "target/simulate", "target/doctor", "common/boards",
                   "target/judge/gaps.py", "target/judge/gaps_inspector.py", "target/judge/run_result.py",
                   "analyses/numerics", "analyses/graph_layout", "orchestration/workers", "orchestration/jobs",
                   "orchestration/compare", "orchestration/sweep", "target/profile", "target/memory",
                   "analyses/report/html_report.py", "analyses/report/dot_export.py", "analyses/report/interactive",
                   "stages/cache.py")


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """Hash of this package's sources: a change to the analysis invalidates cached results. Once per
    process: the code that makes this process's results is the code it loaded, not what the files
    say later (a result lowered by old code must not be stored under the edited code's key)."""
    h = hashlib.sha1()
    pkg = Path(__file__).resolve().parents[1]            # backend_core/
    for f in sorted(pkg.rglob("*.py")):
        rel = "/".join(f.relative_to(pkg).parts)
        if any(rel == part or rel.startswith(part + "/") for part in _NOT_IN_RESULTS):
            continue
        h.update(f.read_bytes())
    return h.hexdigest()


# Of an editable ExecuTorch, the sources that make a lowering (hashing all 4,000 files would cost a hit ~0.2 s).
_EDITABLE_PARTS = {"executorch": ("backends/cortex_m", "backends/arm/quantizer", "backends/transforms", "exir")}


def _editable_sources(name: str) -> str:
    """Hash of an editable package's Python sources (they change without a reinstall)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    h = hashlib.sha1()
    for base in (spec.submodule_search_locations or []) if spec else []:
        for part in _EDITABLE_PARTS.get(name, ("",)):
            for f in sorted(Path(base, part).rglob("*.py")):
                h.update(str(f).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _stack_fingerprint() -> str:
    return json.dumps(stack_fingerprint_uncached(), sort_keys=True)


def stack_fingerprint() -> dict[str, str]:
    """stack_fingerprint_uncached(), once per process (the loaded packages are what made its results)."""
    return json.loads(_stack_fingerprint())


# What makes a lowering besides this package (its own code is code_fingerprint): torchvision builds the
# zoo's MobileNets.
STACK = ("executorch", "torch", "torchao", "torchvision")


def _dist_info(name: str) -> Path | None:
    """The package's .dist-info folder, found beside it without importlib.metadata (its first lookup
    costs 0.15-0.4 s, most of a cache hit); an editable install's lives in site-packages, not beside."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    loc = next(iter(spec.submodule_search_locations or []), None) or os.path.dirname(spec.origin or "")
    found = sorted(Path(loc).parent.glob(f"{name}-*.dist-info"))
    if found:
        return found[-1]
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    path = getattr(dist, "_path", None)
    return Path(path) if path is not None else None


def stack_fingerprint_uncached() -> dict[str, str]:
    """Per package: its dist-info name (name and version) and the hash of its RECORD (every installed
    file's sha256, written by pip: a reinstall of a rebuilt wheel with the same version changes it), or
    of its sources when it is installed editable (they change without any reinstall)."""
    out = {}
    for p in STACK:
        info = _dist_info(p)
        if info is None:
            out[p] = "not installed"
            continue
        try:
            direct = json.loads((info / "direct_url.json").read_text())
        except (OSError, ValueError):
            direct = {}
        if direct.get("dir_info", {}).get("editable"):
            content = "editable:" + _editable_sources(p)
        else:
            try:
                content = hashlib.sha1((info / "RECORD").read_bytes()).hexdigest()
            except OSError:
                content = "no RECORD"
        out[p] = f"{info.name}:{content}"
    return out


def cache_key(fingerprint: str, options_key: str) -> str:
    blob = json.dumps([FORMAT_VERSION, fingerprint, options_key, stack_fingerprint(), code_fingerprint()],
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass
class Lookup:
    """What a lookup found: the entry (payload, blobs) or None, and why a stored entry was not used
    ("helper.py changed"; "" when there was none). `dependencies` are the entry's recorded files."""

    entry: tuple[dict[str, Any], dict[str, bytes]] | None
    reason: str = ""
    dependencies: tuple[Dependency, ...] = ()


class ResultCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_root()) / "lower"

    def _dir(self, key: str) -> Path:
        return self.root / key

    def dependencies(self, key: str) -> list[Dependency]:
        try:
            return [Dependency.from_dict(d) for d in json.loads((self._dir(key) / DEPS_FILE).read_text())]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def lookup(self, key: str) -> Lookup:
        """The entry if it exists and every recorded file still has its recorded content."""
        d = self._dir(key)
        f = d / PAYLOAD_FILE
        if not f.is_file():
            return Lookup(None)
        deps = self.dependencies(key)
        changes = [c for c in (dep.change() for dep in deps) if c]
        if changes:
            return Lookup(None, describe_changes(changes), tuple(deps))
        try:
            data = decode_payload(f.read_bytes())
        except (ValueError, KeyError, TypeError) as e:   # truncated, foreign or of another format: a miss
            return Lookup(None, f"the cached entry is not valid ({e}); it is computed again")
        blobs = {p.name: p.read_bytes() for p in d.iterdir() if _is_blob(p)}
        return Lookup((data, blobs), "", tuple(deps))

    def load(self, key: str) -> tuple[dict[str, Any], dict[str, bytes]] | None:
        return self.lookup(key).entry

    def store(self, key: str, data: dict[str, Any], blobs: dict[str, bytes],
              dependencies: list[Dependency] | tuple[Dependency, ...] = ()) -> None:
        d = self._dir(key)
        d.mkdir(parents=True, exist_ok=True)
        (d / PAYLOAD_FILE).unlink(missing_ok=True)     # the entry is invalid until its last file lands
        for old_payload in _OLD_PAYLOADS:
            (d / old_payload).unlink(missing_ok=True)
        for old in d.iterdir():               # blobs of an earlier entry under this key
            if _is_blob(old) and old.name not in blobs:
                old.unlink()
        for name, b in blobs.items():
            (d / name).write_bytes(b)
        _atomic_write(d / DEPS_FILE, json.dumps([dep.to_dict() for dep in dependencies], indent=1).encode())
        # Last (it makes the entry a hit). Data only: JSON with each snapshot in its to_dict() form, so a
        # cache shared between users (a team's CI volume) can hold nothing that runs on load.
        _atomic_write(d / PAYLOAD_FILE, encode_payload(data))


# Per-channel lists (a conv's weight scales, its requantisation) repeat in every stage snapshot from the
# quantized one on: U-Net's payload was 18 MB, 8.8 MB of them weight scales, and writing it cost a lowering
# 0.35 s. Each such list is stored once and named by its index.
_SHARED_LISTS = frozenset({"scales", "effective_scales", "multipliers", "shifts"})
_MIN_SHARED = 8


def _numbers(v: Any) -> bool:
    return (isinstance(v, list) and len(v) >= _MIN_SHARED
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))


def _share_lists(snapshot: dict[str, Any], table: list[list], index: dict[tuple, int]) -> dict[str, Any]:
    """The snapshot dict with its nodes' per-channel lists (input/output qparams, requantisation) replaced
    by {"__list__": i} into `table` (only those places: walking every value cost more than it saved)."""
    def ref(values: list) -> dict[str, int]:
        key = tuple(values)
        i = index.get(key)
        if i is None:
            i = index[key] = len(table)
            table.append(values)
        return {"__list__": i}

    def shared(d: dict[str, Any] | None) -> dict[str, Any] | None:
        if not d:
            return d
        out = None
        for k in _SHARED_LISTS.intersection(d):
            if _numbers(d[k]):
                out = out if out is not None else dict(d)
                out[k] = ref(d[k])
        return out if out is not None else d

    nodes = []
    for n in snapshot.get("nodes", []):
        n = dict(n)
        n["input_qparams"] = [[i, shared(q)] for i, q in n.get("input_qparams") or []]
        n["output_qparams"] = shared(n.get("output_qparams"))
        n["requant"] = shared(n.get("requant"))
        nodes.append(n)
    return {**snapshot, "nodes": nodes}


def encode_payload(data: dict[str, Any]) -> bytes:
    """A cache entry's payload as JSON: GraphSnapshots as {"__snapshot__": to_dict()}, under the format, the
    repeated per-channel lists first (`{"__lists__": [...]}`, so reading resolves each reference as it comes)."""
    from backend_core.common.snapshot.model import GraphSnapshot

    table: list[list] = []
    index: dict[tuple, int] = {}

    def default(o: Any) -> Any:
        if isinstance(o, GraphSnapshot):
            return {"__snapshot__": _share_lists(o.to_dict(), table, index)}
        if hasattr(o, "item"):                      # a numpy or torch scalar
            return o.item()
        raise TypeError(f"a cache payload holds data only, not {type(o).__name__}")
    body = json.dumps(data, default=default, check_circular=False)
    lists = json.dumps({"__lists__": table}, check_circular=False)
    return f'{{"format": "{FORMAT_VERSION}", "lists": {lists}, "payload": {body}}}'.encode()


def decode_payload(raw: bytes) -> dict[str, Any]:
    """The payload back, checked: this format, a dict, its snapshots GraphSnapshots. ValueError otherwise."""
    from backend_core.common.snapshot.model import GraphSnapshot, snapshot_from_dict

    table: list[list] = []

    def hook(d: dict[str, Any]) -> Any:
        if len(d) == 1:
            if "__list__" in d:
                return table[d["__list__"]]
            if "__lists__" in d:
                table[:] = d["__lists__"]
                return d
            if "__snapshot__" in d:
                return snapshot_from_dict(d["__snapshot__"])
        return d
    try:
        doc = json.loads(raw.decode("utf-8"), object_hook=hook)
    except (IndexError, TypeError) as e:
        raise ValueError(f"a list reference that the entry does not hold ({e})") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_VERSION:
        raise ValueError(f"format {doc.get('format') if isinstance(doc, dict) else '?'}, this cmlens reads {FORMAT_VERSION}")
    payload = doc.get("payload")
    if not isinstance(payload, dict) or not isinstance(payload.get("snapshots"), list) \
            or not all(isinstance(x, GraphSnapshot) for x in payload["snapshots"]):
        raise ValueError("its payload has no graph snapshots")
    return payload


def _is_blob(path: Path) -> bool:
    """A file an entry stores beside its payload (model.pte, model.bpte, references.json): every file but
    the payload, the recorded dependencies and a write in progress. (Reading back only .pte/.bpte made
    every lowering that asked for a .bpte a miss, since its references.json never came back.)"""
    return (path.name not in (PAYLOAD_FILE, DEPS_FILE, *_OLD_PAYLOADS) and path.suffix != ".tmp"
            and path.is_file())


def _atomic_write(path: Path, data: bytes) -> None:
    """Write then rename: a crash never leaves half a file (the temporary name ends in .tmp)."""
    from backend_core.common.files import write_atomic

    write_atomic(path, data)
