"""`cmlens doctor`: what the target flow finds on this machine, with versions, and for every missing
piece the exact command that installs it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from backend_core.common.errors import CmlensError
from backend_core.target.toolchain import checkout as co
from backend_core.target.toolchain import tools as tl


@dataclass
class DoctorItem:
    """One line of the report."""

    name: str
    status: str          # "ok", "missing", "warning", "info"
    detail: str          # path + version, or what is wrong
    fix: str = ""        # install command / what to do
    required: bool = True


@dataclass
class DoctorReport:
    """Every finding; `ok` is True when everything the QEMU flow needs is present."""

    items: list[DoctorItem] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)      # `cmlens --version`'s lines: what a bug report carries

    @property
    def ok(self) -> bool:
        return not any(i.required and i.status == "missing" for i in self.items)

    @property
    def missing(self) -> list[DoctorItem]:
        return [i for i in self.items if i.status == "missing"]

    def to_dict(self) -> dict:
        return {"ok": self.ok, "versions": self.versions, "items": [asdict(i) for i in self.items]}

    @classmethod
    def from_dict(cls, d: dict) -> "DoctorReport":
        """The report a doctor step returned (JobResult.steps["doctor"]), for its text."""
        return cls([DoctorItem(**i) for i in d.get("items", [])], list(d.get("versions", [])))

    def to_text(self) -> str:
        marks = {"ok": "ok  ", "missing": "MISS", "warning": "WARN", "info": "info"}
        out = list(self.versions)
        for i in self.items:
            opt = "" if i.required or i.status == "ok" else " (optional)"
            out.append(f"[{marks.get(i.status, i.status)}] {i.name}{opt}: {i.detail}")
            if i.fix:
                out.append(f"       fix: {i.fix}")
        req = [i for i in self.missing if i.required]
        if req:
            out.append(f"{len(req)} required item(s) missing: the QEMU target flow cannot run.")
        else:
            out.append("Everything the QEMU target flow needs is present.")
        return "\n".join(out)


def _tool_item(t: tl.Tool) -> DoctorItem:
    if t.found:
        detail = f"{t.path}" + (f" ({t.version})" if t.version else "")
        return DoctorItem(t.name, "ok", detail, required=t.required)
    return DoctorItem(t.name, "missing", f"not found; needed to {t.purpose}" + (f" ({t.note})" if t.note else ""),
                      t.install, t.required)


def run_doctor(et_root: str | Path | None = None, cmsis_nn: str | Path | None = None,
               env: Mapping[str, str] | None = None, path_env: str | None = None,
               reach: Callable[[], bool] = co.can_reach, cache_root: Path | None = None) -> DoctorReport:
    """Discover tools, the ExecuTorch checkout and CMSIS-NN. Never raises for a missing piece.
    `reach` says whether GitHub can be reached (asked only when CMSIS-NN would have to be downloaded)."""
    from backend_core.target.doctor.version import version_lines

    report = DoctorReport(versions=version_lines(str(et_root) if et_root else (env or {}).get("EXECUTORCH_ROOT")))
    checkout = None
    try:
        checkout = co.find_checkout(et_root, env)
    except CmlensError as exc:
        report.items.append(DoctorItem("ExecuTorch checkout", "missing", exc.message, exc.hint, required=True))
    tools = tl.discover(checkout.root if checkout else et_root, path_env)
    report.items += [_tool_item(t) for t in tools]

    pkg = co.installed_package_version()
    report.items.append(DoctorItem(
        "executorch package", "ok" if pkg else "warning",
        f"version {pkg}" if pkg else "not installed (lowering models needs it)",
        "" if pkg else "pip install executorch", required=False))
    if checkout is not None:
        detail = f"{checkout.root} (from {checkout.source}; version {checkout.version or '?'}"
        detail += f", commit {checkout.commit[:12]})" if checkout.commit else ")"
        report.items.append(DoctorItem("ExecuTorch checkout", "ok", detail, required=False))
        for w in checkout.warnings:
            report.items.append(DoctorItem("ExecuTorch checkout", "warning", w, required=False))
        for cause, fix in checkout.problems:
            report.items.append(DoctorItem("ExecuTorch checkout", "missing", cause, fix, required=True))
        report.items.append(_library_cache_item(checkout, cache_root))
    elif not any(i.name == "ExecuTorch checkout" for i in report.items):
        report.items.append(DoctorItem(
            "ExecuTorch checkout", "info",
            "none given: the self-test works without it; running models on a target needs one",
            "git clone https://github.com/pytorch/executorch and pass --et-root PATH "
            "(or set EXECUTORCH_ROOT)", required=False))
    try:
        nn = co.find_cmsis_nn(cmsis_nn, checkout, env)
        if nn.path is not None:
            report.items.append(DoctorItem("CMSIS-NN", "ok", f"{nn.path} (from {nn.source})", required=False))
        elif checkout is not None and not reach():
            err = co.offline_cmsis_nn_error(nn.fetch_tag)
            built = next((i for i in report.items if i.name == "ExecuTorch libraries" and i.status == "ok"), None)
            if built is None:
                report.items.append(DoctorItem("CMSIS-NN", "missing", err.message, err.hint, required=True))
            else:   # runs on the CPUs already built need no download
                report.items.append(DoctorItem(
                    "CMSIS-NN", "warning", err.message + " Only a CPU whose libraries are not built yet needs it "
                    f"({built.detail.split(' in ')[0]}).", err.hint, required=False))
        else:
            report.items.append(DoctorItem("CMSIS-NN", "info", nn.note, required=False))
    except CmlensError as exc:
        report.items.append(DoctorItem("CMSIS-NN", "missing", exc.message, exc.hint, required=True))
    return report


def _library_cache_item(checkout: co.Checkout, cache_root: Path | None = None) -> DoctorItem:
    """Which CPUs the ExecuTorch libraries of this checkout are already built for: stamps of the same
    commit, or, for a checkout without git metadata (no commit), of the same checkout directory."""
    import json

    from backend_core.target.build.paths import cache_dir
    from backend_core.target.build.library_stamp import STAMP, build_time_hint

    base = (Path(cache_root) if cache_root is not None else cache_dir()) / "executorch"
    built = []
    for stamp in sorted(base.glob(f"*/{STAMP}")):
        try:
            data = json.loads(stamp.read_text())
        except (OSError, ValueError):
            continue
        same = (data.get("commit") == checkout.commit if checkout.commit
                else not data.get("commit") and data.get("et_root") == str(checkout.root))
        if same:
            built.append(f"{data.get('cpu')} {data.get('build_type')} (cold build {data.get('cold_build_s', 0):.0f} s)")
    if built:
        return DoctorItem("ExecuTorch libraries", "ok", "built for " + ", ".join(built) + f" in {base}",
                          required=False)
    what = "this commit" if checkout.commit else "this checkout"
    return DoctorItem("ExecuTorch libraries", "info",
                      f"not built yet for {what}: the first `cmlens run` for a CPU builds them "
                      f"({build_time_hint(cache_root)})", required=False)
