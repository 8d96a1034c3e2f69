"""Words on every line, on the real PP-OCRv5 weights: the recogniser's character alignment for OCR'd lines
(upright, turned and upside down), the characters' boxes for a PDF's text layer, one word per character
for Chinese; each word's polygon, cut out of the page, reads back as the word."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from PIL import Image

from ocr_platform.cpu.job_runner import ocr_document
from ocr_platform.engines.options import EngineOptions
from tests.documents import CHINESE_LINES, MIXED_ORIENTATION_BOXES, character_error_rate, render_mixed_orientation_page

PUBLIC = Path(__file__).resolve().parents[1] / "documents" / "public"


def _box(polygon: list[list[float]]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _iou(a: list[list[float]], b: list[list[float]]) -> float:
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = _box(a), _box(b)
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return inter / union if union else 0.0


def _word_crops(image: Image.Image, polygon: list[list[float]]) -> list[np.ndarray]:
    """The word's box cut from the page, in each of the four quarter turns (BGR, as the recogniser takes it)."""
    x0, y0, x1, y1 = _box(polygon)
    crop = image.crop((int(x0), int(y0), int(x1) + 1, int(y1) + 1)).convert("RGB")
    return [np.ascontiguousarray(np.asarray(crop.rotate(angle, expand=True))[:, :, ::-1]) for angle in (0, 90, 180, 270)]


def _read_back(recognize, image: Image.Image, polygon: list[list[float]]) -> str:
    """What the recogniser reads in a word's box, turned whichever way it reads best."""
    text, _ = max(recognize(_word_crops(image, polygon)), key=lambda read: read[1])
    return text.strip()


def test_each_word_polygon_reads_back_as_the_word_in_every_direction(ppocr, tmp_path: Path) -> None:
    image = render_mixed_orientation_page()
    path = tmp_path / "mixed.png"
    image.save(path)
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv5", engine=ppocr)

    expected = {text for lines in MIXED_ORIENTATION_BOXES.values() for text in lines}
    lines = [line for line in result["pages"][0]["lines"] if line["text"] in expected]
    assert len(lines) >= 7, [line["text"] for line in result["pages"][0]["lines"]]
    words = [word for line in lines for word in line["words"]]
    for line in lines:
        assert [word["text"] for word in line["words"]] == line["text"].split()
        assert all(word["score"] == line["score"] for word in line["words"])
    recognize = ppocr._recognizer(ppocr.models_for("en", EngineOptions()))
    read = [_read_back(recognize, image, word["polygon"]) for word in words]
    errors = [character_error_rate(text, word["text"]) for text, word in zip(read, words, strict=True)]
    assert statistics.mean(errors) <= 0.1, " ".join(f"{word['text']}={text}" for text, word in zip(read, words, strict=True))
    assert sum(error == 0 for error in errors) >= 0.9 * len(words)


def test_chinese_gets_one_word_per_character(ppocr, docs: dict[str, Path]) -> None:
    result, _ = ocr_document(docs["chinese"], job_id="t", model="pp-ocrv5", engine=ppocr)

    lines = result["pages"][0]["lines"]
    assert character_error_rate("".join(line["text"] for line in lines), "".join(CHINESE_LINES)) <= 0.1
    for line in lines:
        assert [word["text"] for word in line["words"]] == list(line["text"])
        lefts = [_box(word["polygon"])[0] for word in line["words"]]
        assert lefts == sorted(lefts)


def test_text_layer_words_lie_where_ocr_finds_them_on_a_public_form(ppocr) -> None:
    """SF424_page2.pdf (a US federal form, tests/documents/public): its text layer's words, from the characters'
    boxes, against the same page's words OCR'd with the layer ignored."""
    form = PUBLIC / "SF424_page2.pdf"
    layer, _ = ocr_document(form, job_id="t", model="pp-ocrv5", engine=ppocr)
    ocr, _ = ocr_document(form, job_id="t", model="pp-ocrv5", engine=ppocr, options={"text_layer": "ignore"})

    assert layer["pages"][0]["text_source"] == "text_layer"
    layer_words = [word for line in layer["pages"][0]["lines"] for word in line["words"]]
    ocr_words = [word for line in ocr["pages"][0]["lines"] for word in line["words"]]
    for line in layer["pages"][0]["lines"]:
        assert " ".join(word["text"] for word in line["words"]) == " ".join(line["text"].split())
    overlaps = []
    for word in layer_words:
        same = [other for other in ocr_words if other["text"] == word["text"]]
        if same:
            overlaps.append(max(_iou(word["polygon"], other["polygon"]) for other in same))
    assert len(overlaps) >= 0.8 * len(layer_words)
    assert sum(overlap >= 0.5 for overlap in overlaps) >= 0.85 * len(overlaps)
