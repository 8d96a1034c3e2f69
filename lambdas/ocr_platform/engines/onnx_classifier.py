"""The page and text-line orientation classifiers run on ONNX Runtime directly, without importing PaddleX.

PaddleX's image classification predictor (``paddlex.inference.models.image_classification``) does four
things with a model directory's ``inference.yml`` and ``inference.onnx``: it turns the BGR image into RGB,
applies the ``PreProcess`` ops (``ResizeImage`` by the short side or to a size, ``CropImage`` at the
centre, ``NormalizeImage``, ``ToCHWImage``) with OpenCV, runs the graph, and takes the best class
(``Topk``). ``OnnxClassifier`` does the same four steps in a few lines and returns what PaddleX returns
(``class_ids``, ``scores``, ``label_names``), so ``engines.orientation`` can use either.

What it buys: importing PaddleX costs a fresh process 1.4-3.5 s (docs/performance/cold-start.md), and a
route whose text models do not run on PaddleX (``pp-ocrv6`` on faster-paddle) needs it for nothing else.
A model directory with an op it does not know is left to PaddleX (``supported``).

>>> ops = [{"ResizeImage": {"size": [192, 48]}}, {"NormalizeImage": {"mean": [0.5] * 3, "std": [0.5] * 3, "scale": 1 / 255}}, {"ToCHWImage": None}]
>>> import numpy as np
>>> preprocess(np.zeros((30, 100, 3), dtype=np.uint8), ops).shape
(3, 48, 192)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The ``PreProcess`` ops PaddleX 3.7's classification predictor knows, all handled here.
KNOWN_OPS = frozenset({"ResizeImage", "CropImage", "NormalizeImage", "ToCHWImage"})


def supported(model_dir: Path) -> bool:
    """Whether ``model_dir`` is an ONNX classifier whose preprocessing ``OnnxClassifier`` reproduces."""
    import yaml

    if not (model_dir / "inference.onnx").is_file() or not (model_dir / "inference.yml").is_file():
        return False
    config = yaml.safe_load((model_dir / "inference.yml").read_text(encoding="utf-8")) or {}
    ops = (config.get("PreProcess") or {}).get("transform_ops") or []
    return all(isinstance(op, dict) and set(op) <= KNOWN_OPS for op in ops) and "Topk" in (config.get("PostProcess") or {})


def preprocess(image_rgb: Any, ops: list[dict[str, Any]]) -> Any:
    """``image_rgb`` (HWC, uint8) through the ``PreProcess`` ops as PaddleX applies them."""
    import cv2
    import numpy as np

    image = image_rgb
    for op in ops:
        [(name, args)] = op.items()
        args = args or {}
        if name == "ResizeImage":
            height, width = image.shape[:2]
            if args.get("resize_short"):
                scale = args["resize_short"] / min(height, width)
                size = (round(width * scale), round(height * scale))
            else:
                size = tuple(args["size"]) if isinstance(args["size"], list) else (args["size"], args["size"])
            image = cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
        elif name == "CropImage":
            crop = args.get("size", 224)
            crop_w, crop_h = (crop, crop) if isinstance(crop, int) else crop
            height, width = image.shape[:2]
            x0, y0 = max(0, (width - crop_w) // 2), max(0, (height - crop_h) // 2)
            image = image[y0 : y0 + crop_h, x0 : x0 + crop_w]
        elif name == "NormalizeImage":
            scale = float(args.get("scale", 1 / 255))
            mean = np.asarray(args.get("mean", [0.485, 0.456, 0.406]), dtype=np.float32)
            std = np.asarray(args.get("std", [0.229, 0.224, 0.225]), dtype=np.float32)
            image = (image.astype(np.float32) * (scale / std) - mean / std).astype(np.float32)
        elif name == "ToCHWImage":
            image = image.transpose((2, 0, 1))
    return image


class OnnxClassifier:
    """One classification model directory (``inference.onnx`` + ``inference.yml``) on ONNX Runtime, one thread.

    ``predict(images)`` takes one BGR image or a list of them and returns one result per image with
    ``class_ids``, ``scores`` and ``label_names`` (the best class), as PaddleX's predictor does.
    """

    def __init__(self, model_dir: Path) -> None:
        import onnxruntime as ort
        import yaml

        config = yaml.safe_load((model_dir / "inference.yml").read_text(encoding="utf-8"))
        self.ops: list[dict[str, Any]] = config["PreProcess"]["transform_ops"]
        topk = config["PostProcess"]["Topk"] or {}
        self.labels = [str(label) for label in topk.get("label_list") or []]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_dir / "inference.onnx"), options, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name

    def predict(self, images: Any) -> list[dict[str, Any]]:
        import cv2
        import numpy as np

        batch = [images] if isinstance(images, np.ndarray) else list(images)
        results = []
        for image in batch:
            tensor = preprocess(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), self.ops)[np.newaxis].astype(np.float32)
            scores = np.asarray(self.session.run(None, {self.input_name: tensor})[0])[0]
            best = int(scores.argmax())
            name = self.labels[best] if best < len(self.labels) else str(best)
            results.append({"class_ids": np.array([best], dtype=np.int32), "scores": [float(scores[best])], "label_names": [name]})
        return results
