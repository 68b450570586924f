"""The metric functions on tiny handmade cases whose answers are worked out by hand."""
from __future__ import annotations

import math

import pytest
import torch

from backend_core.analyses.accuracy.metrics import auc, classification, margin, output_errors, reconstruction_errors, topk


def test_classification_on_three_samples() -> None:
    logits = [torch.tensor([[0.1, 0.7, 0.2]]), torch.tensor([[0.5, 0.2, 0.3]]), torch.tensor([[0.2, 0.3, 0.5]])]
    labels = [1, 2, 2]                               # right, wrong (predicts 0; 2 is second), right
    c = classification(logits, labels, 3, reference=[1, 0, 0])
    assert c["predictions"] == [1, 0, 2]
    assert c["top1"] == pytest.approx(2 / 3) and c["correct"] == 2
    assert c["topk"] == 3 and c["top5"] == 1.0       # fewer than 5 classes: top-3, every label is in it
    assert c["agreement"] == pytest.approx(2 / 3)    # the third prediction differs from the reference
    assert c["confusion"] == [[0, 0, 0], [0, 1, 0], [1, 0, 1]]
    assert c["per_class"] == {"0": None, "1": 1.0, "2": 0.5}


def test_top5_counts_a_label_ranked_fifth_and_not_sixth() -> None:
    x = torch.arange(10.0).flip(0).reshape(1, 10)    # class 0 best, class 9 worst
    assert topk(x, 5) == [0, 1, 2, 3, 4]
    assert classification([x], [4], 10)["top5"] == 1.0
    assert classification([x], [5], 10)["top5"] == 0.0
    assert margin(torch.tensor([[3.0, 1.0, 2.5]])) == pytest.approx(0.5)


def test_st_output_metrics_by_hand() -> None:
    ref = [torch.tensor([3.0, 4.0])]                 # ||ref|| = 5
    test = [torch.tensor([3.0, 1.0])]                # error (0, -3): ||err|| = 3
    e = output_errors(ref, test)
    assert e["rmse"] == pytest.approx(math.sqrt(9 / 2))
    assert e["mae"] == pytest.approx(1.5)
    assert e["l2_relative"] == pytest.approx(3 / 5)
    assert e["cosine"] == pytest.approx((9 + 4) / (5 * math.sqrt(10)))
    assert e["max_abs"] == pytest.approx(3.0)
    # pooled over samples, not averaged per sample
    two = output_errors([torch.tensor([1.0]), torch.tensor([10.0])], [torch.tensor([2.0]), torch.tensor([10.0])])
    assert two["rmse"] == pytest.approx(math.sqrt(1 / 2)) and two["l2_relative"] == pytest.approx(1 / math.sqrt(101))


def test_auc_and_reconstruction_error() -> None:
    assert auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == pytest.approx(0.75)
    assert auc([0.5, 0.5], [True, False]) == pytest.approx(0.5)            # a tie counts one half
    assert auc([0.2, 0.9], [False, True]) == 1.0 and auc([0.2, 0.9], [True, False]) == 0.0
    assert auc([0.1, 0.2], [False, False]) is None                          # no anomaly: no AUC
    err = reconstruction_errors([torch.tensor([[1.0, 2.0]])], [torch.tensor([[1.0, 4.0]])])
    assert err == [pytest.approx(2.0)]
