"""A searchable PDF from a document and its result.json: the pages as submitted, with the recognised text laid
over them as an invisible text layer, as OCRmyPDF produces. Selecting or searching text in a PDF viewer then
highlights the words on the page image, and a PDF's text extraction returns the OCR text.

Each output page is one result page, in the result's order (a job may have read only some pages):

- a PDF page is the source page object itself, unchanged (content, resources, MediaBox, CropBox, /Rotate),
  with a text overlay drawn by reportlab merged on top by pypdf; nothing is rendered or re-encoded.
- an image frame (PNG, JPEG, TIFF, BMP, WEBP) becomes a page of the frame's own pixel size at its own DPI
  (96 DPI when the file has none that is plausible), the frame embedded at native resolution: a JPEG's own
  bytes, anything else losslessly.

Polygons are in pixels of the page image the engine read: a PDF page as pdfium renders it at the page's
``scale`` (its /Rotate applied, its CropBox shown), an image frame scaled by ``scale``. The result's ``rotation``
is not applied again: the polygons are already on the page as submitted. A PDF pixel is mapped back to the page's
default user space by undoing the scale, the /Rotate and the CropBox offset.

Each line's words are drawn invisibly (text render mode 3), each fitted to its own polygon (``core.words``), with a
space fitted to the gap between two words the line's text separates by one, so a search highlights the word, not
a stretched line: the font size makes the font's ascent-to-descent span the word's height, the horizontal scaling
makes the string exactly as long as the polygon's top edge (p0 to p1, the reading direction), the baseline turns
with that edge, and the descenders touch the polygon's bottom edge. A line only skewed from a quarter turn, as a
scan is (``outputs.text_placement``), has each word drawn level instead, centred on its polygon: the words step
along the line's slope, and each word's characters share one baseline, which pdftotext needs to read a word whole.
A line without words, or with a word too small to place, is drawn whole over its own polygon the same way. Empty
lines and degenerate polygons are skipped, and so is text a PDF page has already, which would otherwise be found
twice (``text_source``: every line of a ``text_layer`` page, and on an ``ocr`` or ``mixed`` page the lines whose
text pdfium finds at their place in the page's own text).

Text that cp1252 can encode is set in Helvetica; anything else in one of the CJK fonts PDF readers provide
themselves (reportlab's CID fonts, not embedded: the text is invisible, only its character codes matter):
HYSMyeongJo-Medium for Korean, STSong-Light for the rest (Chinese, Japanese, Greek, Cyrillic, ...), so text
extraction returns the same Unicode text. Scripts neither covers (Arabic, Devanagari, Thai, ...) keep their
Unicode codes, which pdfium extracts but readers that go through the font's character collection may not.

Pages are handled one at a time and nothing is rendered; the output is assembled in memory and written at the
end, so a refused result leaves no file behind.

>>> import json
>>> from pathlib import Path
>>> from ocr_platform.outputs.searchable_pdf import write_searchable_pdf
>>> result = json.loads(Path("result.json").read_text())  # doctest: +SKIP
>>> write_searchable_pdf(Path("scan.pdf"), result, Path("scan.searchable.pdf"))  # doctest: +SKIP
PosixPath('scan.searchable.pdf')
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocr_platform.core.results import Line, OcrResult, Page
from ocr_platform.document.intake import DocumentType, detect_type
from ocr_platform.outputs.pdf_pages import numbered_pages, pdfium_page_count
from ocr_platform.outputs.text_placement import PixelToPoint, Placement, Point, level_direction, place

if TYPE_CHECKING:
    from PIL import Image
    from pypdf import PageObject, PdfReader
    from reportlab.pdfgen.canvas import Canvas

#: Pixels per inch of an image whose file states none (or an implausible one): a CSS pixel, so a viewer at
#: 100 % zoom shows the page at the image's own size on screen, as img2pdf does.
DEFAULT_IMAGE_DPI = 96.0
#: Stated resolutions outside this range are taken for the junk some writers put there (0, 1, 65535).
PLAUSIBLE_DPI = (36.0, 9600.0)
#: The largest page side PDF readers are required to show (Acrobat's 200 inches); a larger image is given a
#: higher DPI so that its page stays within it.
MAX_PAGE_POINTS = 14400.0
#: How far around a line of a ``mixed`` page its text is looked for in the page's own text.
OWN_TEXT_MARGIN_POINTS = 2.0

LATIN_FONT = "Helvetica"
CJK_FONT = "STSong-Light"
KOREAN_FONT = "HYSMyeongJo-Medium"
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff]")


def write_searchable_pdf(source: Path, result: OcrResult, target: Path) -> Path:
    """Write to ``target`` the pages of ``result`` from the document ``source``, each with its lines as an
    invisible, searchable text layer; returns ``target``.

    Raises ``ValueError`` when a result page is not in ``source`` (before anything is written).
    """
    with source.open("rb") as handle:
        doc_type = detect_type(handle.read(1024))
    if doc_type is DocumentType.PDF:
        _write_pdf(source, result["pages"], target)
    else:
        _write_images(source, result["pages"], target)
    return target


def _check_pages(pages: Sequence[Page], page_count: int, source: Path) -> None:
    for page in pages:
        if not 1 <= page["page"] <= page_count:
            raise ValueError(f"Result page {page['page']} is not in {source.name}, which has {page_count} page(s).")


def _write_pdf(source: Path, pages: Sequence[Page], target: Path) -> None:
    from pypdf import PdfReader, PdfWriter, Transformation

    with source.open("rb") as handle, _own_text(source, pages) as own_text:
        reader = PdfReader(handle)
        source_pages = numbered_pages(reader, pdfium_page_count(source))  # the page loop's numbers
        _check_pages(pages, len(source_pages), source)
        writer = PdfWriter()
        _copy_metadata(reader, writer)
        for result_page in pages:
            page = writer.add_page(source_pages[result_page["page"] - 1])
            box = _crop_box(page)
            to_point = _pdf_pixel_to_point(page, result_page["scale"])
            overlay = _text_overlay(_new_lines(result_page, to_point, own_text), box, to_point)
            if overlay is not None:
                page.merge_transformed_page(overlay, Transformation().translate(box[0], box[1]))
        writer.write(target)


OwnText = Callable[[int, Point, Point], str]


@contextmanager
def _own_text(source: Path, pages: Sequence[Page]) -> Iterator[OwnText | None]:
    """The text a page of ``source`` has within a user-space rectangle (page number, lower-left and upper-right
    corners), read by pdfium one page at a time; ``None`` when every page is a ``text_layer`` page."""
    if all(page.get("text_source") == "text_layer" for page in pages):
        yield None
        return
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(source))
    current: dict[int, Any] = {}

    def text_within(number: int, lower_left: Point, upper_right: Point) -> str:
        if number not in current:
            for textpage in current.values():
                textpage.close()
            current.clear()
            current[number] = pdf[number - 1].get_textpage()
        return str(current[number].get_text_bounded(lower_left[0], lower_left[1], upper_right[0], upper_right[1]))

    try:
        yield text_within
    finally:
        pdf.close()


def _new_lines(page: Page, to_point: PixelToPoint, own_text: OwnText | None) -> list[Line]:
    """The lines to draw on a PDF page: none of a ``text_layer`` page (every line is the page's own text), and on an
    ``ocr`` or ``mixed`` page those whose text the page's own text lacks where they lie (a page read by OCR may have
    its own text: ``text_layer: ignore``). The page's own text drawn again would make every search find it twice."""
    if page.get("text_source", "ocr") == "text_layer":
        return []
    if own_text is None:
        return list(page["lines"])
    return [line for line in page["lines"] if not _in_own_text(page["page"], line, to_point, own_text)]


def _in_own_text(number: int, line: Line, to_point: PixelToPoint, own_text: OwnText) -> bool:
    text = "".join(line["text"].split())
    if not text or not all(math.isfinite(float(c)) for point in line["polygon"] for c in point):
        return False
    points = [to_point(float(x), float(y)) for x, y in line["polygon"]]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    margin = OWN_TEXT_MARGIN_POINTS
    found = own_text(number, (min(xs) - margin, min(ys) - margin), (max(xs) + margin, max(ys) + margin))
    return text in "".join(found.split())


def _copy_metadata(reader: PdfReader, writer: Any) -> None:
    metadata = reader.metadata
    if metadata:
        writer.add_metadata({key: value for key, value in metadata.items() if isinstance(value, str)})


def _crop_box(page: PageObject) -> tuple[float, float, float, float]:
    """The visible box as pdfium renders it: the CropBox (MediaBox when none) clipped to the MediaBox."""
    media = _normalised(page.mediabox)
    crop = _normalised(page.cropbox)
    clipped = (max(crop[0], media[0]), max(crop[1], media[1]), min(crop[2], media[2]), min(crop[3], media[3]))
    return clipped if clipped[0] < clipped[2] and clipped[1] < clipped[3] else media


def _normalised(box: Any) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(value) for value in box)
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


def _pdf_pixel_to_point(page: PageObject, scale: float) -> PixelToPoint:
    """Map a pixel of the page as pdfium renders it at ``scale`` to the page's default user space."""
    from ocr_platform.document.text_layer import PageGeometry

    left, bottom, right, top = _crop_box(page)
    # As pdfium reads /Rotate: whole quarter turns clockwise, rounded towards zero.
    rotation = math.trunc(float(page.rotation) / 90) % 4 * 90
    return PageGeometry(left=left, bottom=bottom, right=right, top=top, rotation=rotation, scale=scale).to_user


def _write_images(source: Path, pages: Sequence[Page], target: Path) -> None:
    from PIL import Image
    from reportlab.pdfgen.canvas import Canvas

    with Image.open(source) as image, _binary_streams():
        _check_pages(pages, getattr(image, "n_frames", 1), source)
        canvas = Canvas(str(target), pageCompression=1)
        for result_page in pages:
            image.seek(result_page["page"] - 1)
            _draw_image_page(canvas, image, source, result_page)
            canvas.showPage()
        canvas.save()


def _draw_image_page(canvas: Canvas, image: Image.Image, source: Path, result_page: Page) -> None:
    from reportlab.lib.utils import ImageReader

    dpi_x, dpi_y = _image_dpi(image)
    width, height = image.width * 72.0 / dpi_x, image.height * 72.0 / dpi_y
    canvas.setPageSize((width, height))
    canvas.drawImage(ImageReader(_embeddable(image, source)), 0, 0, width=width, height=height)
    per_pixel = result_page["scale"]

    def to_point(x: float, y: float) -> Point:
        return x / per_pixel * 72.0 / dpi_x, height - y / per_pixel * 72.0 / dpi_y

    _draw_lines(canvas, result_page["lines"], to_point)


def _image_dpi(image: Image.Image) -> tuple[float, float]:
    """The frame's own DPI when plausible (else ``DEFAULT_IMAGE_DPI``), raised where the page would exceed
    ``MAX_PAGE_POINTS``."""
    stated = image.info.get("dpi")
    low, high = PLAUSIBLE_DPI
    dpi_x = dpi_y = DEFAULT_IMAGE_DPI
    if isinstance(stated, tuple) and len(stated) == 2 and all(isinstance(v, Real) and low <= float(v) <= high for v in stated):
        dpi_x, dpi_y = (_whole_if_close(float(v)) for v in stated)
    return max(dpi_x, image.width * 72.0 / MAX_PAGE_POINTS), max(dpi_y, image.height * 72.0 / MAX_PAGE_POINTS)


def _whole_if_close(dpi: float) -> float:
    """PNG and BMP state resolution in pixels per metre, so 150 DPI reads back as 150.0124: round that off."""
    return float(round(dpi)) if abs(dpi - round(dpi)) < 0.05 else dpi


def _embeddable(image: Image.Image, source: Path) -> str | Image.Image:
    """What to embed for the current frame: the JPEG file itself (passed through, not re-encoded) when it is a
    plain RGB or grey JPEG, else the frame as the engine saw it (``convert("RGB")``), kept grey when it is."""
    if image.format == "JPEG" and image.mode in ("L", "RGB"):
        return str(source)
    return image.convert("L" if image.mode in ("1", "L") else "RGB")


def _text_overlay(lines: Sequence[Line], box: tuple[float, float, float, float], to_point: PixelToPoint) -> PageObject | None:
    """A one-page PDF the size of ``box`` with ``lines`` drawn invisibly, its origin at the box's lower-left
    corner (``None`` when no line is drawn)."""
    from pypdf import PdfReader
    from reportlab.pdfgen.canvas import Canvas

    left, bottom, right, top = box
    buffer = io.BytesIO()
    with _binary_streams():
        canvas = Canvas(buffer, pagesize=(right - left, top - bottom), pageCompression=1)
        canvas.translate(-left, -bottom)
        if not _draw_lines(canvas, lines, to_point):
            return None
        canvas.showPage()
        canvas.save()
    return PdfReader(buffer).pages[0]


_rl_config_lock = threading.Lock()


@contextmanager
def _binary_streams() -> Iterator[None]:
    """reportlab without its ASCII85 stream encoding (a process-wide setting, on by default), which would make
    every embedded image and text layer a quarter larger."""
    from reportlab import rl_config

    with _rl_config_lock:
        saved = rl_config.useA85
        rl_config.useA85 = 0
        try:
            yield
        finally:
            rl_config.useA85 = saved


def _draw_lines(canvas: Canvas, lines: Sequence[Line], to_point: PixelToPoint) -> int:
    """Draw each line invisibly over its polygon, word by word where it has words; returns how many were drawn."""
    drawn = 0
    for line in lines:
        text = line["text"].strip()
        if not text:
            continue
        font_name = _font_for(text)
        level = level_direction(line["polygon"], to_point)
        pieces = _pieces(line, lone_characters=font_name == LATIN_FONT)
        placements = [place(polygon, to_point, level) for _, polygon in pieces]
        if any(placement is None for placement, (piece, _) in zip(placements, pieces, strict=True) if piece != " "):
            pieces, placements = [(text, line["polygon"])], [place(line["polygon"], to_point, level)]
        if placements[0] is None:
            continue
        drawing: list[tuple[str, Placement]] = []
        for (piece, _), placement in zip(pieces, placements, strict=True):
            if placement is not None:
                drawing.append((piece, placement))
            elif drawing:  # a gap too narrow to hold its space: the space goes at the end of the word before it
                drawing[-1] = (drawing[-1][0] + piece, drawing[-1][1])
        text_object = canvas.beginText()  # one text object a line: extractors read its pieces as one line
        text_object.setTextRenderMode(3)
        for piece, placement in drawing:
            _draw_text(text_object, piece, placement, font_name)
        canvas.drawText(text_object)
        drawn += 1
    return drawn


Polygon = Sequence[Sequence[float]]


def _pieces(line: Line, *, lone_characters: bool = True) -> list[tuple[str, Polygon]]:
    """What to draw for a line: each run of words the line's text does not separate (a word, or a Chinese line's
    characters) over its words' polygons, and a space over the gap between two runs; the whole line when it has no
    words. Without ``lone_characters`` a run of one character takes the space after it (pdfium extracts nothing
    from a one-character string in the CJK fonts).

    >>> line = {"text": "ab cd", "polygon": [], "score": 1.0, "words": [
    ...     {"text": "ab", "polygon": [[0, 0], [2, 0], [2, 1], [0, 1]], "score": 1.0},
    ...     {"text": "cd", "polygon": [[3, 0], [5, 0], [5, 1], [3, 1]], "score": 1.0}]}
    >>> _pieces(line)
    [('ab', [[0, 0], [2, 0], [2, 1], [0, 1]]), (' ', [[2, 0], [3, 0], [3, 1], [2, 1]]), ('cd', [[3, 0], [5, 0], [5, 1], [3, 1]])]
    """
    words = [word for word in line.get("words", []) if word["text"].strip() and len(word["polygon"]) == 4]
    if not words:
        return [(line["text"].strip(), line["polygon"])]
    text, cursor = line["text"], 0
    pieces: list[tuple[str, Polygon]] = []
    spaced = True
    for word in words:
        found = text.find(word["text"], cursor)
        if pieces and found > cursor and text[cursor:found].isspace():
            (_, end, bottom_end, _), (start, _, _, bottom_start) = pieces[-1][1], word["polygon"]
            pieces.append((" ", [end, start, bottom_start, bottom_end]))
            spaced = True
        if pieces and not spaced:
            pieces[-1] = (pieces[-1][0] + word["text"], _joined(pieces[-1][1], word["polygon"]))
        else:
            pieces.append((word["text"], word["polygon"]))
        cursor, spaced = (found + len(word["text"]) if found >= 0 else cursor), False
    if not lone_characters:
        for index in range(len(pieces) - 2, -1, -1):
            if len(pieces[index][0]) == 1 and pieces[index + 1][0] == " ":
                pieces[index : index + 2] = [(pieces[index][0] + " ", _joined(pieces[index][1], pieces[index + 1][1]))]
    return pieces


def _joined(first: Polygon, second: Polygon) -> list[list[float]]:
    """The quadrilateral from ``first``'s start to ``second``'s end (corners as a line's)."""
    return [list(first[0]), list(second[1]), list(second[2]), list(first[3])]


def _draw_text(text_object: Any, text: str, placement: Placement, font_name: str) -> None:
    """Set ``text`` in ``text_object``, fitted to ``placement``: as tall as its height, exactly as long as its length."""
    from reportlab.pdfbase.pdfmetrics import getFont, stringWidth

    face = getFont(font_name).face
    size = placement.height * 1000.0 / (face.ascent - face.descent)
    natural = stringWidth(text, font_name, size)
    if natural <= 0:
        return
    (x0, y0), (dx, dy) = placement.origin, placement.direction
    rise = -face.descent * size / 1000.0
    text_object.setFont(font_name, size)
    text_object.setHorizScale(100.0 * placement.length / natural)
    text_object.setTextTransform(dx, dy, -dy, dx, x0 - dy * rise, y0 + dx * rise)
    text_object.textOut(text)


def _font_for(text: str) -> str:
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return _cid_font(KOREAN_FONT if _HANGUL.search(text) else CJK_FONT)
    return LATIN_FONT


@cache
def _cid_font(name: str) -> str:
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfbase.pdfmetrics import registerFont

    registerFont(UnicodeCIDFont(name))
    return name
