"""`cmlens history`: every figure of a model across its commits, and the first commit that changed one.

  add REPORT.json        record a report written earlier (CI steps that already write JSON)
  show MODEL             each metric over the commits, every change marked (--html F: charts)
  backfill MODEL         lower each commit of --range A..B / --last N in a temporary worktree and record it
  bisect MODEL           the first commit where --metric changed from its value at --good
  export / import        the store as JSON lines (merge CI runners' records through an artefact)

Exit 0 done (bisect: found), 1 bisect found no change, 2 bad input (not a git repository, unknown
commit, empty range, unknown metric)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import guarded
from .history_flags import HISTORY_HELP
from .outputs import add_output

EPILOG = """examples:
  cmlens history backfill models/net.py --last 20 --calib 1      # each of the last 20 commits, on the local pool
  cmlens history show models/net.py                              # every metric over the commits, changes marked
  cmlens history show models/net.py --html trends.html
  cmlens history bisect models/net.py --metric fallbacks --good v1.0 --bad HEAD
  cmlens lower models/net.py --record                            # record the work tree's lowering at HEAD
  cmlens history export models/net.py -o runner1.jsonl && cmlens history import runner1.jsonl --history main.db
  cmlens gate lowering.json --history .cmlens/history.db --branch main   # gate a PR against main's last record

The store is .cmlens/history.db in the model's repository (the folder ignores itself in git), or
--history PATH | sqlite:///PATH | postgresql://USER@HOST:PORT/DB.
"""


def add_history_command(sub: Any) -> None:
    from .history_run import add_backfill_parser, add_bisect_parser

    p = sub.add_parser("history", help="every figure of a model across commits; the first commit that changed one",
                       description=__doc__.split("\n\n")[0], epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    hs = p.add_subparsers(dest="history_command", metavar="ACTION")
    a = hs.add_parser("add", help="record a `cmlens lower --json` report (or a job result's JSON)")
    a.add_argument("report", metavar="REPORT.json")
    a.add_argument("--model", metavar="PATH", help="the model file (default: the report's source)")
    a.add_argument("--commit", metavar="REV", help="the commit it was lowered at (default HEAD, with its dirty flag)")
    a.add_argument("--history", metavar="URL", help=HISTORY_HELP)
    a.set_defaults(func=run_add)
    s = hs.add_parser("show", help="each metric over the commits, with every change marked")
    s.add_argument("model", metavar="MODEL", help="the model file in its git repository (path[:NAME])")
    s.add_argument("--history", metavar="URL", help=HISTORY_HELP)
    s.add_argument("--config", metavar="KEY", help="the configuration, as printed (when the model has several)")
    s.add_argument("--metric", action="append", metavar="M", help="only these metrics (repeatable)")
    s.add_argument("--time-threshold", default="25%", metavar="25%",
                   help="relative change of the lowering time that counts as a change (default %(default)s; "
                        "changes under 1 s never count: one lowering per commit is a noisy sample)")
    add_output(s, "--html", metavar="F", help="write the charts and the change list as one self-contained HTML file")
    s.add_argument("--reports", action="store_true",
                   help="with --html: also write each commit's recorded lowering report and each change's compare "
                        "page into F's folder F_files/ (from the store, no lowering); a click opens them")
    add_output(s, "--json", metavar="F", help="write the records and changes as JSON")
    s.add_argument("--envs", action="store_true",
                   help="the configuration (--config, without env=) under every Python environment it was recorded "
                        "in (`backfill --python`), side by side; the default when those are its only series")
    s.set_defaults(func=run_show)
    add_backfill_parser(hs)
    add_bisect_parser(hs)
    e = hs.add_parser("export", help="write the store's records as JSON lines")
    e.add_argument("model", nargs="?", metavar="MODEL", help="only this model (and its repository's default store)")
    e.add_argument("--history", metavar="URL", help=HISTORY_HELP)
    add_output(e, "-o", "--output", metavar="F", help="the file (default: standard output)")
    e.set_defaults(func=run_export)
    i = hs.add_parser("import", help="add records from JSON lines (`history export`)")
    i.add_argument("file", metavar="F.jsonl")
    i.add_argument("--history", metavar="URL", help=HISTORY_HELP)
    i.add_argument("--model", metavar="PATH", help="use the default store of this model's repository")
    i.set_defaults(func=run_import)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def store_for(args: argparse.Namespace, model_source: str | None, *, create: bool = True) -> tuple[Any, Any]:
    """(the open store, the located model or None): --history, else the model repository's default store.
    `create=False` for commands that only read: a missing store is an error, and nothing is written."""
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.history import default_store, open_store
    from backend_core.orchestration.history.git import locate

    model = locate(model_source) if model_source else None
    if getattr(args, "history", None):
        return open_store(args.history, create=create), model
    if model is None:
        raise BadInputError("No history store given.", "Pass --history PATH|URL, or a MODEL file in its repository.")
    return open_store(default_store(model, create=create), create=create), model


def parse_fraction(text: str, flag: str) -> float:
    from backend_core.common.errors import BadInputError

    t = text.strip()
    try:
        return float(t[:-1]) / 100.0 if t.endswith("%") else float(t)
    except ValueError:
        raise BadInputError(f"{flag} {text!r} is not a fraction.", f"Write it like {flag} 25%.") from None


def run_add(args: argparse.Namespace) -> int:
    def work() -> int:
        from backend_core.common.errors import BadInputError
        from backend_core.orchestration.history import record_report
        from backend_core.orchestration.history.git import locate

        try:
            report = json.loads(Path(args.report).read_text())
        except (OSError, ValueError) as exc:
            raise BadInputError(f"Cannot read {args.report}: {exc}", "Give the JSON `cmlens lower --json` wrote.") from None
        if not isinstance(report, dict):
            raise BadInputError(f"{args.report} is not a report.", "Give the JSON `cmlens lower --json` wrote.")
        source = args.model or report.get("source") or (report.get("job") or {}).get("model")
        if args.model is None and source and not Path(source).is_absolute():
            cand = Path(args.report).resolve().parent / source          # a path as given to `cmlens lower`
            source = str(cand) if cand.exists() and not Path(source).exists() else source
        url = args.history
        if url is None and source:
            from backend_core.orchestration.history import default_store

            url = str(default_store(locate(source)))
        rec = record_report(report, source, url, commit=args.commit)
        state = "ok" if rec.ok else f"failure: {(rec.error or {}).get('message', '')}"
        print(f"recorded {rec.model} @ {rec.short} [{rec.config}] ({state}) in {url}")
        return 0
    return guarded(work)


_COLUMNS = ("fallbacks", "cmsis_nn_ops", "portable_ops", "arena_bytes", "pte_bytes", "method_allocator_bytes",
            "fits", "instructions", "estimated_ms", "output_sqnr_db", "top1.lowered", "lowering_s")
_HEAD = {"fallbacks": "fallbk", "cmsis_nn_ops": "cmsis", "portable_ops": "portbl", "arena_bytes": "arena B",
         "pte_bytes": "flash B", "method_allocator_bytes": "RAM B", "fits": "fits", "instructions": "instr",
         "estimated_ms": "≈ ms",
         "output_sqnr_db": "SQNR dB", "top1.lowered": "top-1 %", "lowering_s": "lower s"}


def _cell(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(v):,}"


def subject_width(recs: list[Any], rest: int, columns: int | None = None) -> int:
    """The subject column: as wide as the longest subject, as far as the terminal has room beside the other
    columns (`rest`), never under 28 characters."""
    import shutil

    room = (columns or shutil.get_terminal_size((120, 24)).columns) - rest
    longest = max((len(r.subject or "") for r in recs), default=0)
    return max(28, min(longest, room))


def fit(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[:width - 1] + "…"


def show_text(h: Any, where: str, metrics: list[str] | None = None, columns: int | None = None) -> str:
    """The table of `history show`; `columns`: the terminal's width (default: the one it runs in)."""
    from backend_core.orchestration.history.metrics import value
    from backend_core.orchestration.history.trends import METRIC

    recs = h.records
    cols = [c for c in (metrics or _COLUMNS) if any(c in r.metrics for r in recs) or c == "fallbacks"]
    changed = {(c.index, c.metric) for c in h.changes if c.kind == METRIC}
    lines = [f"history of {h.model} [{h.config}]: {len(recs)} commit(s), store {where}", ""]
    sw = subject_width(recs, 3 + 2 + 8 + 2 + 10 + 2 + 11 * len(cols) + len("  (dirty)"), columns)
    head = f"{'#':>3}  {'commit':8}  {'date':10}  {'subject':{sw}}" + "".join(f" {_HEAD.get(c, c[:9]):>10}"
                                                                         for c in cols)
    lines.append(head)
    for i, r in enumerate(recs):
        row = f"{i + 1:3d}  {r.short:8}  {(r.commit_date or '')[:10]:10}  {fit(r.subject or '', sw):{sw}}"
        if not r.ok:
            row += f"  FAILED: {((r.error or {}).get('message') or '')[:70]}"
        else:
            for c in cols:
                mark = "*" if (i, c) in changed else " "
                row += f" {_cell(value(r.metrics, c)) + mark:>10}"
        lines.append(row + ("  (dirty)" if r.dirty else ""))
    shown = [c for c in h.changes if not metrics or c.kind != METRIC or c.metric in metrics]
    lines += ["", f"changes ({len(shown)}):" if shown else "no change over these commits."]
    for c in shown:
        lines.append(f"  #{c.index + 1} {c.commit[:8]} \"{(c.subject or '')[:50]}\": {c.text()}")
    if any(c.kind == METRIC for c in shown):
        lines.append("  (* in the table: the value changed at that commit)")
    return "\n".join(lines)


def show_envs_text(histories: list[Any], differences: list[Any], where: str, metrics: list[str] | None) -> str:
    """Each environment's series (its table and changes), then the figures that differ between them."""
    from backend_core.orchestration.history.envs import env_label
    from backend_core.orchestration.history.metrics import label

    labels = [env_label(h) for h in histories]
    lines = [f"{histories[0].model} [{histories[0].config.partition(' env=')[0]}] under {len(histories)} Python "
             "environments:"] + [f"  {k + 1}. {lab}: {len(h.records)} commit(s) [{h.config}]"
                                 for k, (lab, h) in enumerate(zip(labels, histories))]
    for k, (lab, h) in enumerate(zip(labels, histories)):
        lines += ["", f"== {k + 1}. {lab} ==", show_text(h, where, metrics)]
    both = len({r.commit for r in histories[0].records}.intersection(*[{r.commit for r in h.records}
                                                                       for h in histories[1:]]))
    lines += ["", f"between the environments ({both} commit(s) recorded in all):"]
    if not differences:
        lines.append("  no figure differs (lowering time is not compared)")
    short = [lab.split(" (")[0] for lab in labels]
    for d in differences:
        vals = ", ".join(f"{s} {_cell(v) if not isinstance(v, str) else v}" for s, v in zip(short, d.values))
        lines.append(f"  {d.commit[:8]} \"{(d.subject or '')[:40]}\": {label(d.metric)}: {vals}")
    return "\n".join(lines)


def _run_show_envs(args: argparse.Namespace, store: Any, model: Any, key: str) -> int:
    from backend_core.orchestration.history.envs import env_differences, load_env_histories
    from backend_core.orchestration.history.trends import ordered

    root = model.root if model else None
    hs = load_env_histories(store, key, config=args.config, root=root,
                            time_threshold=parse_fraction(args.time_threshold, "--time-threshold"))
    diffs = env_differences(hs, args.metric, root)
    print(show_envs_text(hs, diffs, store.where, args.metric))
    if args.html:
        from backend_core.orchestration.history.envs_html import env_history_html

        order = list(dict.fromkeys(r.commit for r in ordered([r for h in hs for r in h.records], root)))
        page = env_history_html(f"History of {key} under {len(hs)} Python environments",
                                f"{hs[0].config.partition(' env=')[0]} · {len(order)} commits · store {store.where}",
                                hs, diffs, order)
        Path(args.html).parent.mkdir(parents=True, exist_ok=True)
        Path(args.html).write_text(page)
        print(f"wrote html: {args.html}")
    if args.json:
        from backend_core.orchestration.history.envs import env_label

        Path(args.json).write_text(json.dumps(
            {"model": key, "environments": [{"label": env_label(h), "config": h.config,
                                             "records": [r.to_dict() for r in h.records],
                                             "changes": [c.to_dict() for c in h.changes]} for h in hs],
             "differences": [d.__dict__ for d in diffs]}, indent=1, default=str))
        print(f"wrote json: {args.json}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    def work() -> int:
        from backend_core.orchestration.history import load_history
        from backend_core.orchestration.history.envs import env_configs

        store, model = store_for(args, args.model, create=False)
        with store:
            key = model.key if model else args.model
            if args.envs or (args.config is None and env_configs(store, key)):
                if args.reports:
                    from backend_core.common.errors import BadInputError

                    raise BadInputError("--reports opens one series' recorded lowerings.",
                                        "Pick the environment with --config \"... env=...\" (as printed) for --reports.")
                return _run_show_envs(args, store, model, key)
            h = load_history(store, key, config=args.config, root=model.root if model else None,
                             time_threshold=parse_fraction(args.time_threshold, "--time-threshold"))
            if args.metric:
                from backend_core.common.errors import BadInputError
                from backend_core.orchestration.history import metric_names

                unknown = [m for m in args.metric if m not in metric_names(h.records)]
                if unknown:
                    raise BadInputError(f"Unknown metric(s): {', '.join(unknown)}.",
                                        "Recorded metrics: " + ", ".join(metric_names(h.records)) + ".")
            print(show_text(h, store.where, args.metric))
            if args.html:
                from backend_core.orchestration.history.html import history_html

                recs = h.records
                links = None
                if args.reports:
                    from backend_core.orchestration.history.pages import write_pages

                    out = Path(args.html)
                    links = write_pages(store, recs, h.changes, out.parent / f"{out.stem}_files")
                    print(f"wrote {len(links['points'])} lowering report(s) and {len(links['changes'])} compare "
                          f"page(s) into {out.parent / (out.stem + '_files')}")
                span = f"{(recs[0].commit_date or '')[:10]} … {(recs[-1].commit_date or '')[:10]}" if recs else ""
                page = history_html(f"History of {h.model}", f"{h.config} · {len(recs)} commits · {span} · "
                                    f"store {store.where}", recs, h.changes, links)
                Path(args.html).parent.mkdir(parents=True, exist_ok=True)
                Path(args.html).write_text(page)
                print(f"wrote html: {args.html}")
            if args.json:
                Path(args.json).write_text(json.dumps(
                    {"model": h.model, "config": h.config, "records": [r.to_dict() for r in h.records],
                     "changes": [c.to_dict() for c in h.changes]}, indent=1, default=str))
                print(f"wrote json: {args.json}")
        return 0
    return guarded(work)


def run_export(args: argparse.Namespace) -> int:
    def work() -> int:
        store, model = store_for(args, args.model, create=False)
        with store:
            if args.output:
                with open(args.output, "w") as fh:
                    n = store.export_jsonl(fh, model.key if model else None)
                print(f"exported {n} record(s) to {args.output}", file=sys.stderr)
            else:
                n = store.export_jsonl(sys.stdout, model.key if model else None)
        return 0
    return guarded(work)


def run_import(args: argparse.Namespace) -> int:
    def work() -> int:
        from backend_core.common.errors import BadInputError

        try:
            text = Path(args.file).read_text()
        except OSError as exc:
            raise BadInputError(f"Cannot read {args.file}: {exc}", "Give a file `cmlens history export` wrote.") from None
        store, _ = store_for(args, args.model)
        with store:
            n = store.import_jsonl(text.splitlines(), args.file)
            print(f"imported {n} record(s) into {store.where}")
        return 0
    return guarded(work)
