"""The evaluation as text lines (`cmlens evaluate`, logs): one row per model with its task metrics,
ST's output metrics against float and its host speed; then per-class accuracy and the flips by layer."""
from __future__ import annotations

from typing import Any

from backend_core.analyses.accuracy.evaluate import MODEL_LABELS, MODELS
from backend_core.analyses.accuracy.flips import flip_lines


def _pct(v: Any) -> str:
    return f"{100 * v:7.2f} %" if isinstance(v, (int, float)) else f"{'-':>9}"


def _num(v: Any, fmt: str = "9.4f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) else f"{'-':>{int(fmt.split('.')[0])}}"


def summary_lines(res: dict[str, Any]) -> list[str]:
    task = res["task"]
    out = [f"{res['model']} -> {res['target']} ({res['flow']} flow): {res['samples']} samples, {res['data']}; "
           f"task: {task}"]
    head = f"{'model':20}"
    if task == "classification":
        head += f" {'top-1':>9} {'top-5':>9}"
    if res["models"]["float"].get("agreement") is not None:
        head += f" {'agree':>9}"
    if task == "regression":
        head += f" {'RMSE lbl':>9} {'MAE lbl':>9}"
    if task == "anomaly":
        head += f" {'recon MSE':>10} {'AUC':>7}"
    head += f" {'RMSE':>9} {'MAE':>9} {'L2 rel':>9} {'cosine':>9} {'samples/s':>10}"
    out += ["", head]
    o0 = res["outputs"][0] if res["outputs"] else {}
    errs = {"float": None, "fake_quant": o0.get("fake_quant_vs_float"), "lowered": o0.get("lowered_vs_float")}
    for k in MODELS:
        m = res["models"].get(k, {})
        row = f"{MODEL_LABELS[k]:20}"
        if task == "classification":
            row += f" {_pct(m.get('top1'))} {_pct(m.get('top5'))}"
        if res["models"]["float"].get("agreement") is not None:
            row += f" {_pct(m.get('agreement'))}"
        if task == "regression":
            vl = m.get("vs_label") or {}
            row += f" {_num(vl.get('rmse'))} {_num(vl.get('mae'))}"
        if task == "anomaly":
            row += f" {_num(m.get('reconstruction_mse'), '10.5f')} {_num(m.get('auc'), '7.4f')}"
        e = errs[k] or {}
        row += (f" {_num(e.get('rmse'))} {_num(e.get('mae'))} {_num(e.get('l2_relative'))} {_num(e.get('cosine'))}"
                f" {_num(res['speed'][k]['samples_per_s'], '10.1f')}")
        out.append(row)
    tm = res["models"].get("target")
    if tm:                                   # the first K samples on the board (jobs/target_run/evaluate.py)
        row = f"{'target (' + str(tm['n']) + ' samples)':20}"
        if task == "classification":
            row += f" {_pct(tm.get('top1'))} {'-':>9}"
        row += f" {_pct(tm.get('agreement'))}"
        if tm.get("lowered_top1_same_samples") is not None:
            row += f"   (lowered on the same {tm['n']}: {_pct(tm['lowered_top1_same_samples']).strip()})"
        out.append(row)
    out.append(f"{'':20} (RMSE, MAE, L2 relative error and cosine of output 0 against float, as ST Edge AI's "
               "validate reports them)")
    low_fq = res["models"]["lowered"].get("agreement_with_fake_quant")
    lf = o0.get("lowered_vs_fake_quant") or {}
    if low_fq is not None or lf:
        out.append(f"{'':20} lowered vs fake-quant (the lowering itself): top-1 agreement {_pct(low_fq).strip()}, "
                   f"SQNR {_num(lf.get('sqnr_db'), '.1f')} dB, max abs error {_num(lf.get('max_abs'), '.4g')}")
    if task == "classification":
        cls = res.get("classes")
        pc = {k: res["models"][k]["per_class"] for k in MODELS}
        cells = []
        for c in pc["float"]:
            name = cls[int(c)] if cls and int(c) < len(cls) else c
            vals = "/".join("-" if pc[k][c] is None else f"{100 * pc[k][c]:.0f}" for k in MODELS)
            cells.append(f"{name}: {vals}")
        out += ["", "per-class top-1 % (float/fake-quant/lowered): " + ", ".join(cells)]
    fl = res.get("flips")
    if fl is not None:
        out += ["", f"flips (top-1 of the lowered program differs from float): {len(res.get('flipped', []))}"
                    f" of {res['samples']}"]
        out += ["  " + line for line in flip_lines(fl)]
        if fl.get("note"):
            out.append(f"  {fl['note']}")
    tgt = res.get("target_run")
    if tgt:
        out += ["", tgt.get("summary", "")]
    for w in res.get("warnings", []):
        out.append(f"warning: {w}")
    return out
