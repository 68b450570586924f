"""One evaluation: float, fake-quant and the lowered program (on the host) on the same samples, the task
metrics the labels allow, ST's output metrics against float, and the flips with the layer behind each.
The result is a JSON-serialisable dict (the `evaluate` step's section of a job result).

The task follows the data: class labels and a (1, C) output are a classification; a target tensor is a
regression (or an autoencoder's reconstruction); class labels 0/1 on a model whose output has its input's
shape are an anomaly detector (the reconstruction error is the score; labels 1 mark anomalies, AUC)."""
from __future__ import annotations

import time
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.analyses.accuracy.data import EvalSet
from backend_core.analyses.accuracy.flips import explain_flips
from backend_core.analyses.accuracy.metrics import auc, classification, margin, output_errors, reconstruction_errors
from backend_core.analyses.accuracy.programs import EvalPrograms, lowered_callable, run_all

__all__ = ["EvalPrograms", "evaluate", "MODELS"]

MODELS = ("float", "fake_quant", "lowered")
MODEL_LABELS = {"float": "float", "fake_quant": "fake-quant (PT2E)", "lowered": "lowered (host)",
                "target": "target"}
Progress = Callable[[str], None]


def evaluate(programs: EvalPrograms, data: EvalSet, *, flips: bool = True, threshold_db: float = 3.0,
             reference_samples: int = 16, max_traced: int = 64, progress: Progress | None = None,
             is_cancelled: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Run the three models on `data` and measure them (see the module docstring)."""
    t_start = time.perf_counter()
    say = progress or (lambda _t: None)
    samples = [s.inputs for s in data.samples]
    names = [s.name for s in data.samples]
    outs: dict[str, list[list[Any]]] = {}
    speed: dict[str, dict[str, Any]] = {}
    fns = {"float": (programs.float_model, True), "fake_quant": (programs.fake_quant, True),
           "lowered": (lowered_callable(programs.lowered), False)}
    for key, (fn, batch) in fns.items():
        say(f"running {MODEL_LABELS[key]} on {len(samples)} samples")
        outs[key], secs, batched = run_all(fn, samples, batch=batch, is_cancelled=is_cancelled)
        speed[key] = {"seconds": round(secs, 3), "samples_per_s": round(len(samples) / secs, 1) if secs > 0 else None,
                      "batched": batched}
    n_out = len(outs["float"][0])
    task = _task(data, outs["float"][0][0], samples[0])
    labels = [s.label for s in data.samples]
    _check_labels(data, task, outs["float"][0][0])

    result: dict[str, Any] = {
        "model": programs.model, "target": programs.target, "flow": programs.flow, "data": data.source,
        "samples": len(samples), "task": task, "classes": data.classes, "warnings": list(data.warnings),
        "speed": speed, "models": {}, "outputs": []}
    for i in range(n_out):
        ref = [o[i] for o in outs["float"]]
        result["outputs"].append({
            "index": i, "shape": list(ref[0].shape),
            "fake_quant_vs_float": output_errors(ref, [o[i] for o in outs["fake_quant"]]),
            "lowered_vs_float": output_errors(ref, [o[i] for o in outs["lowered"]]),
            "lowered_vs_fake_quant": output_errors([o[i] for o in outs["fake_quant"]], [o[i] for o in outs["lowered"]])})

    logits = {k: [o[0] for o in outs[k]] for k in MODELS}
    classifier = task == "classification" or (task == "none" and _is_classifier(logits["float"][0])
                                              and not _reconstructs(logits["float"][0], samples[0]))
    if classifier:
        n_classes = int(logits["float"][0].numel())
        float_preds = [int(x.reshape(-1).argmax()) for x in logits["float"]]
        for k in MODELS:
            if task == "classification":
                c = classification(logits[k], labels, n_classes, reference=float_preds)
            else:                               # no labels: agreement with float only
                c = classification(logits[k], float_preds, n_classes, reference=float_preds)
                c = {"agreement": c["agreement"], "predictions": c["predictions"], "n": c["n"]}
            result["models"][k] = c
        fq, low = result["models"]["fake_quant"]["predictions"], result["models"]["lowered"]["predictions"]
        # the lowering's own fidelity: the lowered program against the model it was lowered from
        result["models"]["lowered"]["agreement_with_fake_quant"] = sum(a == b for a, b in zip(fq, low)) / len(low)
    else:
        result["models"] = {k: {} for k in MODELS}
    if task == "regression":
        for k in MODELS:
            result["models"][k]["vs_label"] = output_errors(labels, logits[k])
    if task == "anomaly":
        for k in MODELS:
            err = reconstruction_errors(logits[k], [s[0] for s in samples])
            result["models"][k].update({"reconstruction_mse": sum(err) / len(err),
                                        "auc": auc(err, [bool(y) for y in labels])})

    if classifier:
        preds = {k: result["models"][k]["predictions"] for k in MODELS}
        flipped = [i for i in range(len(samples)) if preds["float"][i] != preds["lowered"][i]]
        result["flipped"] = [names[i] for i in flipped]
        if flips and flipped:
            margins = [margin(x) for x in logits["float"]]
            result["flips"] = explain_flips(programs, names, samples, flipped, margins, preds=preds,
                                            labels=labels if task == "classification" else None,
                                            threshold_db=threshold_db, reference_samples=reference_samples,
                                            max_traced=max_traced, progress=say)
            for row in result["flips"]["samples"]:
                row["input"] = input_values(samples[row["index"]])
        elif flipped:
            result["flips"] = {"count": len(flipped), "by_layer": [], "samples": [], "note": "not traced (--no-flips)"}
        else:
            result["flips"] = {"count": 0, "by_layer": [], "samples": []}
    result["seconds"] = round(time.perf_counter() - t_start, 3)
    return result


INPUT_VALUES_MAX = 4096      # a flipped sample's input is kept in the JSON up to this many values (a thumbnail)


def input_values(sample: tuple) -> dict[str, Any] | None:
    """A flipped sample's first input, small enough to draw (the window's thumbnail of an 8x8 digit): its
    logical shape (NCHW whatever the memory layout), range and values rounded to 4 decimals, row-major.
    None when it has more than INPUT_VALUES_MAX values or is no floating-point tensor."""
    t = sample[0] if sample else None
    if t is None or not hasattr(t, "numel") or t.numel() > INPUT_VALUES_MAX or not t.is_floating_point():
        return None
    flat = t.detach().float().contiguous().reshape(-1)
    return {"shape": list(t.shape), "min": round(float(flat.min()), 4), "max": round(float(flat.max()), 4),
            "values": [round(float(v), 4) for v in flat.tolist()]}


def _is_classifier(out: Any) -> bool:
    shape = tuple(out.shape)
    return out.is_floating_point() and len(shape) in (1, 2) and shape[-1] >= 2 and (len(shape) == 1 or shape[0] == 1)


def _reconstructs(out: Any, sample: tuple) -> bool:
    """The output has the (only) input's shape: a reconstruction, not class scores."""
    return len(sample) == 1 and tuple(out.shape) == tuple(sample[0].shape)


def _task(data: EvalSet, out0: Any, sample0: tuple) -> str:
    kind = data.label_kind
    if kind == "tensor":
        return "regression"
    if kind == "class":
        if _reconstructs(out0, sample0):      # an autoencoder: its (1, 640) output is no class scores
            return "anomaly"
        if _is_classifier(out0):
            return "classification"
        raise BadInputError(f"{data.source}: the labels are class indices but the model's first output has shape "
                            f"{tuple(out0.shape)}, neither a (1, C) classifier output nor a reconstruction of the input.",
                            "Give target tensors as labels (labels.csv: file,target.npy) for a regression model.")
    return "none"


def _check_labels(data: EvalSet, task: str, out0: Any) -> None:
    if task == "classification":
        n = int(out0.numel())
        for s in data.samples:
            if not 0 <= s.label < n:
                raise BadInputError(f"{data.source}: the label of {s.name} is {s.label}, out of range: the model has "
                                    f"{n} classes (0..{n - 1}).", "Fix the label (class indices start at 0), or "
                                    "evaluate the model the labels were made for.")
        if data.classes is not None and len(data.classes) > n:
            raise BadInputError(f"{data.source} has {len(data.classes)} class folders, the model {n} outputs.",
                                "Keep one sub-folder per class the model predicts.")
    elif task == "anomaly":
        bad = [s.name for s in data.samples if s.label not in (0, 1)]
        if bad:
            raise BadInputError(f"{data.source}: labels of an anomaly detector are 0 (normal) or 1 (anomaly); "
                                f"{bad[0]} has {next(s.label for s in data.samples if s.name == bad[0])}.",
                                "Mark anomalies with 1 and normal samples with 0.")
    elif task == "regression":
        for s in data.samples:
            if s.label.numel() != out0.numel():
                raise BadInputError(f"{data.source}: the target of {s.name} has {s.label.numel()} values, the model's "
                                    f"output {out0.numel()} ({tuple(out0.shape)}).",
                                    "Save targets with the shape of the model's first output.")
