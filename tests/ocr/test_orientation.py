"""Pages and lines as they really come: turned scans, a page with text in every direction, and the
coordinates a user overlays on the page they uploaded. Real PP-OCRv5 and real orientation weights."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from ocr_platform.core.text_metrics import word_f1
from ocr_platform.engines.reading import ocr_document
from tests.documents import (
    ENGLISH_PAGES,
    MIXED_ORIENTATION_BOXES,
    SLANTED_STAMPS,
    render_mixed_orientation_page,
    render_page,
    render_report_page,
    render_slanted_page,
)
from tests.ocr import LOCAL_ORIENTATION_MODELS, polygon_iou

# PIL's transpose that turns an image clockwise by each angle.
CLOCKWISE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


def _read(engine, path: Path, **kwargs) -> dict:
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv5", engine=engine, **kwargs)
    return result


def _text(page: dict) -> str:
    return "\n".join(line["text"] for line in page["lines"])


def _save(image: Image.Image, path: Path) -> Path:
    image.save(path, format="PNG")
    return path


def _turned_point(x: float, y: float, degrees: int, width: int, height: int) -> tuple[float, float]:
    """Where a point of an upright ``width`` x ``height`` page lies once the page is turned clockwise."""
    return {90: (height - y, x), 180: (width - x, height - y), 270: (y, width - x)}[degrees]


@pytest.fixture(scope="module")
def upright(ppocr, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Image.Image, str, dict]]:
    """Two sample pages as an upright scan would come, with their reference text and upright result."""
    root = tmp_path_factory.mktemp("upright")
    pages = {
        "invoice": (render_page(ENGLISH_PAGES[0]), "\n".join(ENGLISH_PAGES[0])),
        "report": (render_report_page(), ""),
    }
    out = {}
    for name, (image, reference) in pages.items():
        result = _read(ppocr, _save(image, root / f"{name}.png"))
        out[name] = (image, reference or _text(result["pages"][0]), result)
    return out


@pytest.mark.parametrize("degrees", [90, 180, 270])
@pytest.mark.parametrize("name", ["invoice", "report"])
def test_a_turned_scan_reads_as_well_as_the_upright_one(ppocr, upright, tmp_path: Path, name: str, degrees: int) -> None:
    image, reference, straight = upright[name]
    upright_f1 = word_f1(reference, _text(straight["pages"][0]))

    result = _read(ppocr, _save(image.transpose(CLOCKWISE[degrees]), tmp_path / "turned.png"))

    [page] = result["pages"]
    assert page["rotation"] == (360 - degrees) % 360
    assert word_f1(reference, _text(page)) >= upright_f1 - 0.02, _text(page)


def test_polygons_are_on_the_page_as_submitted(ppocr, upright, tmp_path: Path) -> None:
    image, _, straight = upright["report"]
    width, height = image.size
    expected = {line["text"]: line["polygon"] for line in straight["pages"][0]["lines"]}

    result = _read(ppocr, _save(image.transpose(CLOCKWISE[90]), tmp_path / "turned.png"))

    [page] = result["pages"]
    assert (page["width"], page["height"], page["rotation"]) == (height, width, 270)
    matched = [line for line in page["lines"] if line["text"] in expected]
    assert len(matched) >= 0.9 * len(expected)
    for line in matched:
        want = [_turned_point(x, y, 90, width, height) for x, y in expected[line["text"]]]
        assert polygon_iou(line["polygon"], want) >= 0.8, (line, want)
        # The first point is still the text's own top-left corner: on a page turned clockwise that is
        # the corner nearest the page's top-right.
        assert line["polygon"][0][0] == max(p[0] for p in line["polygon"])


def test_a_page_with_text_in_every_direction(ppocr, tmp_path: Path) -> None:
    result = _read(ppocr, _save(render_mixed_orientation_page(), tmp_path / "mixed.png"))

    [page] = result["pages"]
    text = _text(page)
    for degrees, lines in MIXED_ORIENTATION_BOXES.items():
        assert word_f1("\n".join(lines), text) > 0, degrees
        for line in lines:
            assert line in text, f"{line!r} ({degrees} degrees) not read: {text!r}"


def test_slanted_stamps_read_upright_or_upside_down(ppocr, tmp_path: Path) -> None:
    result = _read(ppocr, _save(render_slanted_page(), tmp_path / "stamped.png"))

    [page] = result["pages"]
    assert page["rotation"] == 0
    assert sorted(line["text"] for line in page["lines"]) == sorted(SLANTED_STAMPS.values())


def test_orientation_off_reads_the_page_as_submitted(ppocr, upright, tmp_path: Path) -> None:
    image, reference, _ = upright["invoice"]
    path = _save(image.transpose(CLOCKWISE[180]), tmp_path / "upside-down.png")

    result = _read(ppocr, path, options={"orientation": False})

    [page] = result["pages"]
    assert page["rotation"] == 0
    assert word_f1(reference, _text(page)) < 0.5
    assert result["engine"]["models"] == ["PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec"]
    on = _read(ppocr, path)
    assert on["engine"]["models"][2:] == LOCAL_ORIENTATION_MODELS


def test_a_misspelt_option_fails_the_job_with_its_code(ppocr, upright, tmp_path: Path) -> None:
    from ocr_platform.core.errors import JobError

    with pytest.raises(JobError) as caught:
        _read(ppocr, _save(upright["invoice"][0], tmp_path / "p.png"), options={"orientaton": False})
    assert caught.value.code == "invalid_options"
