"""Which operators does a .pte/.bpte need, and does the user's ExecuTorch checkout have kernels for them?

The pip wheel that lowered the model and the checkout that builds the runtime are rarely the same
commit (the 1.5.1 wheel emits `cortex_m::*_nhwc` ops that a 2026-08 checkout lacks). Checking before
the build turns a link error deep in a 15-minute build into one clear sentence.

The operator list is read straight from the flatbuffer (Program.execution_plan[].operators, schema
`schema/program.fbs`; a bundled program `BP08` wraps the Program bytes in its `program` field), with
no ExecuTorch import. The checkout's kernels come from its YAML files (`- func: ns::name.overload(`)."""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from backend_core.common.errors import BadInputError

# YAML files of the checkout whose ops the runner build registers (see kernels/runner/CMakeLists.txt).
OP_YAMLS: dict[str, str] = {
    "cortex_m": "backends/cortex_m/ops/operators.yaml",
    "portable": "kernels/portable/functions.yaml",
    "quantized": "kernels/quantized/quantized.yaml",
}
# Registered by the runtime itself (kernels/prim_ops), not listed in any YAML.
PRIM_OP_PREFIXES = ("executorch_prim::", "aten::sym_size", "aten::sym_numel", "aten::_local_scalar_dense",
                    "aten::sym_", "aten::sym_storage_offset")

_FUNC = re.compile(r"^-\s*(?:func|op):\s*([A-Za-z_][\w:]*(?:\.\w+)?)\s*(?:\(|$)", re.M)


class _Table:
    """Just enough of a flatbuffer table reader: scalar, string, vector of tables / bytes."""

    def __init__(self, buf: bytes, pos: int) -> None:
        self.buf, self.pos = buf, pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vt_len = struct.unpack_from("<H", buf, vt)[0]
        self.vt = vt

    def _field(self, index: int) -> int | None:
        off = 4 + 2 * index
        if off >= self.vt_len:
            return None
        rel = struct.unpack_from("<H", self.buf, self.vt + off)[0]
        return self.pos + rel if rel else None

    def _indirect(self, index: int) -> int | None:
        at = self._field(index)
        return None if at is None else at + struct.unpack_from("<I", self.buf, at)[0]

    def string(self, index: int) -> str | None:
        at = self._indirect(index)
        if at is None:
            return None
        n = struct.unpack_from("<I", self.buf, at)[0]
        return self.buf[at + 4: at + 4 + n].decode("utf-8", "replace")

    def tables(self, index: int) -> list["_Table"]:
        at = self._indirect(index)
        if at is None:
            return []
        n = struct.unpack_from("<I", self.buf, at)[0]
        out = []
        for i in range(n):
            el = at + 4 + 4 * i
            out.append(_Table(self.buf, el + struct.unpack_from("<I", self.buf, el)[0]))
        return out

    def bytes_(self, index: int) -> bytes:
        at = self._indirect(index)
        if at is None:
            return b""
        n = struct.unpack_from("<I", self.buf, at)[0]
        return self.buf[at + 4: at + 4 + n]


def program_bytes(data: bytes) -> bytes:
    """The Program flatbuffer of a .pte, or the one inside a .bpte (identifier BP08)."""
    if len(data) < 8:
        raise BadInputError("The model file is too short to be an ExecuTorch program.")
    ident = data[4:8]
    if ident.startswith(b"BP"):
        inner = _Table(data, struct.unpack_from("<I", data, 0)[0]).bytes_(2)
        if not inner:
            raise BadInputError("The bundled program (.bpte) holds no program.")
        return inner
    if not ident.startswith(b"ET"):
        raise BadInputError(f"Not an ExecuTorch program: file identifier {ident!r} (expected ET.. or BP..).",
                            "Pass a .pte or .bpte written by `cmlens lower --pte/--bpte`.")
    return data


def read_program_ops(data: bytes) -> list[str]:
    """`ns::name.overload` of every operator of every method, in table order, without duplicates."""
    prog = program_bytes(data)
    try:
        root = _Table(prog, struct.unpack_from("<I", prog, 0)[0])
        ops: list[str] = []
        for plan in root.tables(1):              # Program.execution_plan
            for op in plan.tables(6):            # ExecutionPlan.operators
                name, overload = op.string(0) or "", op.string(1) or ""
                full = f"{name}.{overload}" if overload else name
                if full not in ops:
                    ops.append(full)
    except (struct.error, IndexError) as exc:
        raise BadInputError(f"The ExecuTorch program is corrupt: {exc}.") from exc
    return ops


def read_model_ops(path: str | Path) -> list[str]:
    return read_program_ops(Path(path).read_bytes())


def yaml_ops(path: str | Path) -> set[str]:
    """Operator names (`ns::name.overload`, `aten::` added when there is no namespace) of a kernel YAML."""
    ops = set()
    for name in _FUNC.findall(Path(path).read_text(errors="replace")):
        ops.add(name if "::" in name else f"aten::{name}")
    return ops


@dataclass
class OpCheck:
    """Result of comparing a model's operators with a checkout's kernels."""

    model_ops: list[str]
    available: dict[str, str] = field(default_factory=dict)     # op -> library (cortex_m / portable / ...)
    missing: list[str] = field(default_factory=list)
    yamls: dict[str, str] = field(default_factory=dict)          # library -> yaml path used

    @property
    def ok(self) -> bool:
        return not self.missing

    def summary(self) -> str:
        if self.ok:
            by_lib: dict[str, int] = {}
            for lib in self.available.values():
                by_lib[lib] = by_lib.get(lib, 0) + 1
            parts = ", ".join(f"{n} {lib}" for lib, n in sorted(by_lib.items()))
            return f"all {len(self.model_ops)} operators of the model have kernels in the checkout ({parts})"
        return (f"{len(self.missing)} of {len(self.model_ops)} operators of the model have no kernel in the "
                f"checkout: {', '.join(self.missing)}")

    def hint(self) -> str:
        """What to do about missing operators."""
        if self.ok:
            return ""
        nhwc = [op for op in self.missing if op.split(".")[0].endswith("_nhwc")]
        lines = ["The model was lowered by the installed executorch package, whose operator set differs "
                 "from the checkout's."]
        if nhwc:
            lines.append("The *_nhwc cortex_m ops come from the package's explicit-layout flow and this checkout has no "
                         "kernels for them: lower "
                         "with `--flow legacy`, or use a checkout that has them.")
        lines.append("Check out the ExecuTorch commit matching the installed package (pip show executorch), "
                     "or lower the model with a package built from this checkout.")
        return "\n".join(lines)


OWN_OPS_YAML = ("ops", "cmlens_ops.yaml")      # under kernels/: the project's own ops (cmlens::)
_REGISTERED = re.compile(r'Kernel\(\s*"(cmlens::[\w.]+)"')


def own_kernel_ops(kernels_dir: Path | None = None) -> set[str]:
    """The cmlens:: ops that kernels/ops/cmlens_ops.yaml lists AND a source beside it registers
    (`Kernel("cmlens::window.out", ...)`): the runner and the export bundle compile those sources for a
    program that uses one of them, so these ops have kernels whatever the checkout. An op the yaml lists
    but no source registers has none (the check then says so before any build)."""
    from backend_core.target.build.paths import KERNELS_DIR

    root = Path(kernels_dir) if kernels_dir is not None else KERNELS_DIR
    yaml = root.joinpath(*OWN_OPS_YAML)
    if not yaml.is_file():
        return set()
    registered: set[str] = set()
    for src in sorted(yaml.parent.glob("*.cpp")):
        registered |= set(_REGISTERED.findall(src.read_text(errors="replace")))
    return yaml_ops(yaml) & registered


def check_ops(model_ops: list[str], yamls: dict[str, str | Path], kernels_dir: Path | None = None) -> OpCheck:
    """Compare `model_ops` with the ops listed in `yamls` (library name -> YAML path; absent files skipped)
    and the project's own ops that kernels/ops builds (own_kernel_ops, library "cmlens")."""
    known: dict[str, str] = {op: "cmlens" for op in own_kernel_ops(kernels_dir)}
    used: dict[str, str] = {}
    for lib, path in yamls.items():
        p = Path(path)
        if not p.is_file():
            continue
        used[lib] = str(p)
        for op in yaml_ops(p):
            known.setdefault(op, lib)
    result = OpCheck(list(model_ops), yamls=used)
    for op in model_ops:
        if op in known:
            result.available[op] = known[op]
        elif op.startswith(PRIM_OP_PREFIXES):
            result.available[op] = "prim"
        else:
            result.missing.append(op)
    return result


def check_checkout_ops(model: str | Path | bytes, et_root: str | Path) -> OpCheck:
    """The op check of a model file (or its bytes) against the checkout at `et_root`."""
    ops = read_program_ops(model) if isinstance(model, bytes) else read_model_ops(model)
    root = Path(et_root)
    return check_ops(ops, {lib: root / rel for lib, rel in OP_YAMLS.items()})
