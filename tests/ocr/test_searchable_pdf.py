"""The searchable PDF (``ocr_platform.outputs.searchable_pdf``) from real PP-OCRv5 results: the text a PDF reader
extracts is the result's, each word lies where the page shows it, and the pages look exactly as submitted."""

from __future__ import annotations

import ctypes
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image
from pypdf import PageObject, PdfReader, PdfWriter
from pypdf.generic import RectangleObject

from ocr_platform.core.results import OcrResult, Page, build_result
from ocr_platform.core.words import Word
from ocr_platform.engines.reading import ocr_document
from ocr_platform.outputs.searchable_pdf import DEFAULT_IMAGE_DPI, _pdf_pixel_to_point, write_searchable_pdf
from tests.documents import CHINESE_LINES, ENGLISH_PAGES, SLANTED_STAMPS, render_page, render_slanted_page, write_image_pdf, write_tiff

UPRIGHT = {"orientation": False}
TOLERANCE_PX = 3.0


@dataclass(frozen=True)
class Written:
    source: Path
    result: OcrResult
    pdf: Path


def _ocr(engine, path: Path, **kwargs) -> OcrResult:
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv5", engine=engine, **kwargs)
    return result


def _written(engine, source: Path, **kwargs) -> Written:
    result = _ocr(engine, source, **kwargs)
    return Written(source, result, write_searchable_pdf(source, result, source.with_suffix(".searchable.pdf")))


def _word_f1(reference: str, hypothesis: str) -> float:
    """F1 of the multiset of whitespace-separated words (exact, case and punctuation included)."""
    ref, hyp = Counter(reference.split()), Counter(hypothesis.split())
    if not ref and not hyp:
        return 1.0
    return 2 * sum((ref & hyp).values()) / (sum(ref.values()) + sum(hyp.values()))


def _page_text(page: Page) -> str:
    return "\n".join(line["text"] for line in page["lines"])


def _render(path: Path, index: int, scale: float) -> np.ndarray:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return pdf[index].render(scale=scale, rev_byteorder=True).to_numpy().astype(np.int16)
    finally:
        pdf.close()


def _image_difference(path: Path, index: int, image: Image.Image) -> float:
    """How far a page rendered onto exactly as many pixels as ``image`` has is from ``image``: the mean absolute
    difference at the best alignment within one pixel. pdfium keeps the page box in 32-bit floats (1240 px at
    150 DPI is 595.2000122 points), so at a scale like 150 / 72 it may place the image a row off; a resampled or
    re-encoded image differs at any alignment."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        bitmap = pdfium.PdfBitmap.new_native(image.width, image.height, pdfium_c.FPDFBitmap_BGR, rev_byteorder=True)
        bitmap.fill_rect((255, 255, 255, 255), 0, 0, image.width, image.height)
        pdfium_c.FPDF_RenderPageBitmap(bitmap, pdf[index], 0, 0, image.width, image.height, 0, pdfium_c.FPDF_REVERSE_BYTE_ORDER)
        rendered = bitmap.to_numpy().astype(np.int16)
    finally:
        pdf.close()
    expected = np.asarray(image.convert("RGB"), dtype=np.int16)[1:-1, 1:-1]
    height, width = expected.shape[:2]
    return min(_mean_difference(rendered[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width], expected) for dy in (-1, 0, 1) for dx in (-1, 0, 1))


def _mean_difference(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).mean())


Box = tuple[float, float, float, float]


def _extracted_words(path: Path, index: int, scale: float) -> list[tuple[str, Box]]:
    """The words pdfium extracts from a page, each with the union of its characters' boxes in pixels of the
    page rendered at ``scale`` (pdfium's own page-to-device mapping: /Rotate and CropBox included)."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[index]
        bitmap = page.render(scale=scale)
        to_pixel = _page_to_device(page, bitmap.width, bitmap.height)
        textpage = page.get_textpage()
        count = textpage.count_chars()
        words: list[tuple[str, Box]] = []
        chars: list[str] = []
        boxes: list[Box] = []
        for i in range(count + 1):
            char = chr(pdfium_c.FPDFText_GetUnicode(textpage, i)) if i < count else " "
            if char.isspace():
                if chars:
                    xs = [x for box in boxes for x in box[0::2]]
                    ys = [y for box in boxes for y in box[1::2]]
                    words.append(("".join(chars), (min(xs), min(ys), max(xs), max(ys))))
                chars, boxes = [], []
                continue
            left, bottom, right, top = textpage.get_charbox(i)
            corners = [to_pixel(left, bottom), to_pixel(right, top)]
            chars.append(char)
            boxes.append((corners[0][0], corners[0][1], corners[1][0], corners[1][1]))
        return words
    finally:
        pdf.close()


def _page_to_device(page: pdfium.PdfPage, width: int, height: int) -> Callable[[float, float], tuple[float, float]]:
    def to_pixel(x: float, y: float) -> tuple[float, float]:
        device_x, device_y = ctypes.c_int(), ctypes.c_int()
        assert pdfium_c.FPDF_PageToDevice(page, 0, 0, width, height, 0, x, y, device_x, device_y)
        return float(device_x.value), float(device_y.value)

    return to_pixel


def _bbox(polygon: list[list[float]]) -> Box:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _within(inner: Box, outer: Box, tolerance: float = TOLERANCE_PX) -> bool:
    return inner[0] >= outer[0] - tolerance and inner[1] >= outer[1] - tolerance and inner[2] <= outer[2] + tolerance and inner[3] <= outer[3] + tolerance


def _share_on_their_lines(words: list[tuple[str, Box]], page: Page) -> float:
    """The share of extracted words whose box lies within the bounding box of a line of ``page`` that has the word."""
    landed = sum(
        any(word in line["text"].split() and _within(box, _bbox(line["polygon"])) for line in page["lines"]) for word, box in words
    )
    return landed / max(1, len(words))


def _share_on_their_words(words: list[tuple[str, Box]], page: Page) -> float:
    """The share of extracted words whose box lies within the bounding box of the result's word of the same text:
    a search for the word highlights the word, not its whole line."""
    spans: list[tuple[str, Box]] = []  # each space-separated run of a line's words (a Chinese line's characters)
    for line in page["lines"]:
        pending = list(line["words"])
        for token in line["text"].split():
            run: list[Word] = []
            while pending and "".join(word["text"] for word in run) != token:
                run.append(pending.pop(0))
            corners = [point for word in run for point in word["polygon"]]
            spans.append((token, _bbox(corners)))
    landed = sum(any(word == text and _within(box, span) for text, span in spans) for word, box in words)
    return landed / max(1, len(words))


def _assert_searchable(written: Written, index: int, page: Page) -> None:
    """The words pdfium extracts from output page ``index`` are ``page``'s (word F1 >= 0.98), and at least 95 %
    of them lie within their line's polygon and within their word's, in pixels of the page rendered at ``page["scale"]``."""
    words = _extracted_words(written.pdf, index, page["scale"])
    f1 = _word_f1(_page_text(page), " ".join(word for word, _ in words))
    landed = _share_on_their_lines(words, page)
    on_words = _share_on_their_words(words, page)
    assert f1 >= 0.98, (f1, " ".join(w for w, _ in words), _page_text(page))
    assert landed >= 0.95, (landed, words, page["lines"])
    assert on_words >= 0.95, (on_words, words, page["lines"])


@pytest.fixture(scope="module")
def scanned(ppocr, tmp_path_factory: pytest.TempPathFactory) -> Written:
    """A two-page scanned PDF, read and written back as a searchable PDF."""
    source = write_image_pdf(tmp_path_factory.mktemp("scanned") / "scan.pdf", ENGLISH_PAGES[:2])
    return _written(ppocr, source, options=UPRIGHT)


def test_the_text_extracts_back_and_each_word_lies_on_its_line(scanned: Written) -> None:
    assert len(PdfReader(scanned.pdf).pages) == scanned.result["page_count"] == 2
    for index, page in enumerate(scanned.result["pages"]):
        _assert_searchable(scanned, index, page)


def test_the_pages_render_exactly_as_the_input(scanned: Written) -> None:
    for index, page in enumerate(scanned.result["pages"]):
        difference = _mean_difference(_render(scanned.pdf, index, page["scale"]), _render(scanned.source, index, page["scale"]))
        assert difference < 0.5, (page["page"], difference)


def test_each_pdf_page_keeps_its_own_objects(scanned: Written) -> None:
    source, output = PdfReader(scanned.source), PdfReader(scanned.pdf)
    for index, page in enumerate(output.pages):
        original = source.pages[index]
        assert page.mediabox == original.mediabox and page.cropbox == original.cropbox and page.rotation == original.rotation
        assert set(original["/Resources"]["/XObject"]) <= set(page["/Resources"]["/XObject"])
        # One text object per line, each word (and each space between two) set at its own place; no visible text.
        operators = page.get_contents().get_data().split()  # type: ignore[union-attr]
        lines = scanned.result["pages"][index]["lines"]
        assert operators.count(b"Tr") == operators.count(b"BT") - 1 == len(lines)  # the first BT is reportlab's own
        assert sum(len(line["words"]) for line in lines) <= operators.count(b"Tj") <= sum(2 * len(line["words"]) - 1 for line in lines)
        assert all(operators[i - 1] == b"3" for i, operator in enumerate(operators) if operator == b"Tr")


@pytest.fixture(scope="module")
def png_result(ppocr, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, OcrResult]:
    """A PNG page saved at 150 DPI and its result."""
    path = tmp_path_factory.mktemp("png") / "page.png"
    render_page(ENGLISH_PAGES[2]).save(path, format="PNG", dpi=(150, 150))
    return path, _ocr(ppocr, path, options=UPRIGHT)


@pytest.mark.parametrize("dpi", [150, None])
def test_an_image_becomes_a_page_of_its_own_size(png_result: tuple[Path, OcrResult], tmp_path: Path, dpi: int | None) -> None:
    source, result = png_result
    if dpi is None:
        source = tmp_path / "no-dpi.png"
        Image.open(png_result[0]).save(source, format="PNG")
    expected_dpi = dpi or DEFAULT_IMAGE_DPI

    written = Written(source, result, write_searchable_pdf(source, result, tmp_path / "out.pdf"))

    [pdf_page] = PdfReader(written.pdf).pages
    image = Image.open(source)
    assert float(pdf_page.mediabox.width) == pytest.approx(image.width * 72 / expected_dpi)
    assert float(pdf_page.mediabox.height) == pytest.approx(image.height * 72 / expected_dpi)
    page = result["pages"][0]
    _assert_searchable(written, 0, {**page, "scale": expected_dpi / 72})
    assert _image_difference(written.pdf, 0, image) < 0.5


def test_a_jpeg_is_embedded_as_it_is(ppocr, docs: dict[str, Path], tmp_path: Path) -> None:
    result = _ocr(ppocr, docs["jpeg"], options=UPRIGHT)

    written = Written(docs["jpeg"], result, write_searchable_pdf(docs["jpeg"], result, tmp_path / "photo.pdf"))

    [pdf_page] = PdfReader(written.pdf).pages
    [image] = pdf_page["/Resources"]["/XObject"].values()
    image = image.get_object()
    assert image["/Filter"] in ("/DCTDecode", ["/DCTDecode"])
    assert image._data == written.source.read_bytes()
    _assert_searchable(written, 0, {**result["pages"][0], "scale": DEFAULT_IMAGE_DPI / 72})


def test_a_tiff_frame_becomes_a_page(ppocr, tmp_path: Path) -> None:
    source = write_tiff(tmp_path / "fax.tiff", ENGLISH_PAGES)
    written = _written(ppocr, source, pages="2", options=UPRIGHT)

    [page] = written.result["pages"]
    assert len(PdfReader(written.pdf).pages) == 1 and page["page"] == 2
    _assert_searchable(written, 0, {**page, "scale": DEFAULT_IMAGE_DPI / 72})
    with Image.open(source) as frames:
        frames.seek(1)
        frame = frames.convert("RGB")
    assert _image_difference(written.pdf, 0, frame) < 0.5


def test_chinese_text_extracts_back_in_unicode(ppocr, docs: dict[str, Path], tmp_path: Path) -> None:
    result = _ocr(ppocr, docs["chinese"], language="ch", options=UPRIGHT)
    written = Written(docs["chinese"], result, write_searchable_pdf(docs["chinese"], result, tmp_path / "chinese.pdf"))

    page = result["pages"][0]
    assert any(line["text"] in CHINESE_LINES for line in page["lines"]), page["lines"]
    _assert_searchable(written, 0, {**page, "scale": DEFAULT_IMAGE_DPI / 72})


def test_slanted_and_upside_down_lines_are_drawn_along_their_polygons(ppocr, tmp_path: Path) -> None:
    source = tmp_path / "stamped.png"
    render_slanted_page().save(source, format="PNG")
    result = _ocr(ppocr, source)

    written = Written(source, result, write_searchable_pdf(source, result, tmp_path / "stamped.pdf"))

    [page] = result["pages"]
    assert sorted(line["text"] for line in page["lines"]) == sorted(SLANTED_STAMPS.values())
    _assert_searchable(written, 0, {**page, "scale": DEFAULT_IMAGE_DPI / 72})


@pytest.mark.parametrize(
    ("text", "font", "boxed_exactly"),
    [
        ("Total due: 1,234.56 € (Straße)", "/Helvetica", True),
        ("发票号码 二零二六", "/STSong-Light", True),
        ("Ελληνικά и русский текст", "/STSong-Light", True),
        ("한국어 텍스트", "/HYSMyeongJo-Medium", True),
        # pdfium boxes the Latin letters of a CID font by its substitute font's glyphs, wider than the font's
        # /W advances the line is laid out with, so the last digit's box ends past the polygon.
        ("发票号码 No. 2026", "/STSong-Light", False),
    ],
)
def test_each_script_is_set_in_a_font_it_extracts_back_from(tmp_path: Path, text: str, font: str, boxed_exactly: bool) -> None:
    source = tmp_path / "blank.png"
    Image.new("RGB", (800, 200), "white").save(source)
    polygon = [[40.0, 60.0], [700.0, 60.0], [700.0, 120.0], [40.0, 120.0]]
    page: Page = {"page": 1, "width": 800, "height": 200, "scale": 1.0, "lines": [{"text": text, "polygon": polygon, "score": 1.0}]}
    result = build_result("t", "pp-ocrv5", {"name": "test", "models": [], "version": "0"}, [page])

    written = Written(source, result, write_searchable_pdf(source, result, tmp_path / "out.pdf"))

    words = _extracted_words(written.pdf, 0, DEFAULT_IMAGE_DPI / 72)
    assert " ".join(word for word, _ in words) == text
    [pdf_page] = PdfReader(written.pdf).pages
    assert font in {str(f.get_object()["/BaseFont"]).split("-Uni")[0] for f in pdf_page["/Resources"]["/Font"].values()}
    if boxed_exactly:
        # The string runs the polygon's whole length, within it.
        left, right = min(box[0] for _, box in words), max(box[2] for _, box in words)
        assert 40 - TOLERANCE_PX <= left <= 40 + 0.05 * 660 and 700 - 0.05 * 660 <= right <= 700 + TOLERANCE_PX, (left, right)
        assert _share_on_their_lines(words, page) == 1.0


def _single_page_pdf(path: Path, lines: list[str], edit: Callable[[PageObject], None]) -> Path:
    write_image_pdf(path, [lines])
    writer = PdfWriter(clone_from=path)
    edit(writer.pages[0])
    writer.write(path)
    return path


def _rotate(page: PageObject) -> None:
    page.rotate(90)


def _crop(page: PageObject) -> None:
    width, height = float(page.mediabox.width), float(page.mediabox.height)
    page.cropbox = RectangleObject([30, 40, width - 20, height - 25])


@pytest.fixture(scope="module", params=["rotate-90", "cropbox-offset"])
def transformed(request: pytest.FixtureRequest, ppocr, tmp_path_factory: pytest.TempPathFactory) -> Written:
    """A one-page scan turned a quarter clockwise by its /Rotate, or shown through a CropBox that does not
    start at (0, 0): read as a viewer shows it (the turned page's text runs down the page)."""
    edit = {"rotate-90": _rotate, "cropbox-offset": _crop}[request.param]
    source = _single_page_pdf(tmp_path_factory.mktemp(request.param) / "page.pdf", ENGLISH_PAGES[0], edit)
    return _written(ppocr, source)


def test_words_land_on_their_lines_through_rotate_and_cropbox(transformed: Written) -> None:
    [page] = transformed.result["pages"]
    assert len(page["lines"]) == len(ENGLISH_PAGES[0]), page["lines"]
    [original], [output] = PdfReader(transformed.source).pages, PdfReader(transformed.pdf).pages
    assert (output.rotation, output.cropbox, output.mediabox) == (original.rotation, original.cropbox, original.mediabox)
    _assert_searchable(transformed, 0, page)
    difference = _mean_difference(_render(transformed.pdf, 0, page["scale"]), _render(transformed.source, 0, page["scale"]))
    assert difference < 0.5


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_pixels_map_to_user_space_as_pdfium_renders(tmp_path: Path, rotation: int) -> None:
    writer = PdfWriter()
    page = writer.add_blank_page(600, 800)
    page.mediabox = RectangleObject([-50, 100, 550, 900])
    page.cropbox = RectangleObject([10, 150, 510, 850])
    page.rotation = rotation
    writer.write(tmp_path / "page.pdf")
    scale = 2.0
    to_point = _pdf_pixel_to_point(PdfReader(tmp_path / "page.pdf").pages[0], scale)

    pdf = pdfium.PdfDocument(str(tmp_path / "page.pdf"))
    view_width, view_height = (round(side * scale) for side in pdf[0].get_size())
    for x, y in [(0, 0), (37, 411), (view_width, view_height), (view_width - 5, 3)]:
        page_x, page_y = ctypes.c_double(), ctypes.c_double()
        assert pdfium_c.FPDF_DeviceToPage(pdf[0], 0, 0, view_width, view_height, 0, x, y, page_x, page_y)
        assert to_point(x, y) == pytest.approx((page_x.value, page_y.value), abs=1e-3), (x, y)
    pdf.close()


def test_a_page_selection_writes_only_the_selected_pages(ppocr, tmp_path: Path) -> None:
    source = write_image_pdf(tmp_path / "three.pdf", ENGLISH_PAGES)
    written = _written(ppocr, source, pages="2", options=UPRIGHT)

    [page] = written.result["pages"]
    assert page["page"] == 2 and len(PdfReader(written.pdf).pages) == 1
    assert _mean_difference(_render(written.pdf, 0, page["scale"]), _render(source, 1, page["scale"])) < 0.5
    _assert_searchable(written, 0, page)


@pytest.mark.parametrize("text_source", ["text_layer", "mixed"])
def test_text_a_pdf_page_has_already_is_not_drawn_again(docs: dict[str, Path], tmp_path: Path, text_source: str) -> None:
    source, scale = docs["vector_pdf"], 2.0
    own_words = _extracted_words(source, 0, scale)
    # The lines a text_layer or mixed result takes from the page: one per word, with the word's box.
    lines = [{"text": word, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0} for word, (x0, y0, x1, y1) in own_words]
    expected = Counter(word for word, _ in own_words)
    if text_source == "mixed":
        lines.append({"text": "Stamp 7731", "polygon": [[200, 1200], [600, 1200], [600, 1250], [200, 1250]], "score": 0.97})
        expected.update(["Stamp", "7731"])
    page = {"page": 1, "width": 1190, "height": 1684, "scale": scale, "rotation": 0, "text_source": text_source, "lines": lines}
    result = build_result("t", "pp-ocrv5", {"name": "test", "models": [], "version": "0"}, [page])  # type: ignore[list-item]

    written = write_searchable_pdf(source, result, tmp_path / "out.pdf")

    assert Counter(word for word, _ in _extracted_words(written, 0, scale)) == expected


def test_empty_and_degenerate_lines_are_skipped(scanned: Written, tmp_path: Path) -> None:
    page = scanned.result["pages"][0]
    kept = page["lines"][0]
    noise = [
        {"text": "", "polygon": [[10, 10], [90, 10], [90, 40], [10, 40]], "score": 0.9},
        {"text": "dot", "polygon": [[50, 50], [50.5, 50], [50.5, 50.5], [50, 50.5]], "score": 0.9},
        {"text": "flat", "polygon": [[50, 50], [300, 50], [300, 50], [50, 50]], "score": 0.9},
        {"text": "nan", "polygon": [[math.nan, 50], [300, 50], [300, 90], [50, 90]], "score": 0.9},
    ]
    result: OcrResult = {**scanned.result, "pages": [{**page, "lines": [kept, *noise]}]}  # type: ignore[typeddict-item, list-item]

    written = Written(scanned.source, result, write_searchable_pdf(scanned.source, result, tmp_path / "out.pdf"))

    assert [word for word, _ in _extracted_words(written.pdf, 0, page["scale"])] == kept["text"].split()


def test_a_result_page_missing_from_the_source_is_refused(scanned: Written, tmp_path: Path) -> None:
    result: OcrResult = {**scanned.result, "pages": [{**scanned.result["pages"][0], "page": 3}]}

    with pytest.raises(ValueError, match="Result page 3 is not in scan.pdf, which has 2 page"):
        write_searchable_pdf(scanned.source, result, tmp_path / "out.pdf")
    assert not (tmp_path / "out.pdf").exists()
