"""The orientation classifiers on ONNX Runtime directly (``engines.onnx_classifier``) give PaddleX's answers, on
the real weights, and a page read on faster-paddle turns an upside-down line on an upright page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ocr_platform.cpu.job_runner import ocr_document
from ocr_platform.engines.onnx_classifier import OnnxClassifier, supported
from ocr_platform.engines.orientation import PAGE_ORIENTATION_MODEL, TEXTLINE_ORIENTATION_MODEL, classifier_settings
from ocr_platform.engines.resolver import ModelResolver, runtime_kwargs
from tests.documents import REPORT_TITLE, render_report_page


def _bgr(image: Image.Image) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])


@pytest.mark.parametrize(("name", "paddle_class"), [
    (PAGE_ORIENTATION_MODEL, "DocImgOrientationClassification"),
    (TEXTLINE_ORIENTATION_MODEL, "TextLineOrientationClassification"),
])
def test_it_answers_as_paddlex_does_on_pages_and_lines_turned_every_way(ocr_settings, name: str, paddle_class: str) -> None:
    import paddleocr

    settings = classifier_settings(ocr_settings)
    located = ModelResolver(settings).model_kwargs(name)
    assert supported(Path(located["model_dir"]))
    ours = OnnxClassifier(Path(located["model_dir"]))
    theirs = getattr(paddleocr, paddle_class)(**located, **runtime_kwargs(settings)).paddlex_predictor
    page = render_report_page()
    images = [page.rotate(angle, expand=True) for angle in (0, 90, 180, 270)] if name == PAGE_ORIENTATION_MODEL else [
        page.crop((40, 40, 700, 110)), page.crop((40, 40, 700, 110)).rotate(180)]

    for image in images:
        [expected] = list(theirs.predict(_bgr(image)))
        [got] = ours.predict(_bgr(image))
        assert int(got["class_ids"][0]) == int(np.asarray(expected["class_ids"]).ravel()[0])
        assert got["label_names"][0] == str(expected["label_names"][0])
        assert abs(got["scores"][0] - float(expected["scores"][0])) < 1e-4


def test_an_upside_down_line_on_an_upright_page_reads_upright_on_faster_paddle(ppocr_v6, tmp_path: Path) -> None:
    page = render_report_page()
    lines = ocr_document(_png(page, tmp_path / "up.png"), job_id="t", model="pp-ocrv6", engine=ppocr_v6)[0]["pages"][0]["lines"]
    title = next(line for line in lines if REPORT_TITLE in line["text"])
    xs, ys = [x for x, _ in title["polygon"]], [y for _, y in title["polygon"]]
    box = (int(min(xs)) - 4, int(min(ys)) - 4, int(max(xs)) + 4, int(max(ys)) + 4)
    page.paste(page.crop(box).rotate(180), box[:2])

    turned = _png(page, tmp_path / "one-turned.png")
    result, _ = ocr_document(turned, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    as_detected, _ = ocr_document(turned, job_id="t", model="pp-ocrv6", engine=ppocr_v6, options={"orientation": False})

    assert result["pages"][0]["rotation"] == 0
    assert any(REPORT_TITLE in line["text"] for line in result["pages"][0]["lines"])
    assert not any(REPORT_TITLE in line["text"] for line in as_detected["pages"][0]["lines"])


def _png(image: Image.Image, path: Path) -> Path:
    image.save(path, format="PNG")
    return path
