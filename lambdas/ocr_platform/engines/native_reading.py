"""Office and HTML files on the CPU routes: their own text read from the file, their pictures read by the job's engine.

``ocr_platform.engines.reading.ocr_document`` hands such a file here (``native_result``). Intake reads the units
(``ocr_platform.document.intake.read_native``: text, headings, lists and tables from the file, never rendered);
each picture embedded in a unit (a scan pasted into a Word file, a screenshot on a slide, a ``data:`` image in
HTML) is decoded, bounded like any image, and read by the job's own engine (its ``predict`` on the picture as a
PNG, with the job's language and options), and its text is put where the picture stands
(``ocr_platform.document.native_pages.page_content``).

A page is ``text_source`` ``native`` when all its text came from the file, ``mixed`` when a picture's text was
added. Pages have no geometry (``width``, ``height`` and ``scale`` 0; no ``polygon`` on lines, no ``bbox`` on
blocks). A picture that cannot be decoded (a vector EMF or WMF drawing, a damaged file), or beyond
``IntakeLimits.max_pictures`` in one file, is left out of the text, and a ``pictures_unread`` warning says how many.
"""

from __future__ import annotations

import hashlib
import io
import math
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import JobError
from ocr_platform.core.results import Line, OcrResult, Page, ResultWarning, build_result, no_text_warning, page_text
from ocr_platform.core.routing import route
from ocr_platform.document.intake import IntakeLimits, file_type, read_native
from ocr_platform.document.native_files import MACROS_IGNORED, NativeFile, route_refusal
from ocr_platform.document.native_pages import NativePage, page_content
from ocr_platform.engines import Engine
from ocr_platform.engines.attachment_reading import Attachments, read_attachment
from ocr_platform.engines.options import html_content

#: A result warning's ``code`` when pictures embedded in an Office or HTML file were not read.
PICTURES_UNREAD = "pictures_unread"
#: Pictures smaller than this on either side (bullets, rules, spacer pixels) hold no text worth a model's time.
MIN_PICTURE_SIDE = 8


def native_result(
    path: Path,
    *,
    job_id: str,
    model: str,
    engine: Engine,
    language: str = "en",
    pages: str | None = None,
    options: dict[str, Any] | None = None,
    on_page: Callable[[int, int], None] | None = None,
    limits: IntakeLimits | None = None,
) -> tuple[OcrResult, Any] | None:
    """The result of an Office or HTML file read on ``model``'s route; ``None`` for any other file.

    ``unsupported_type`` (``route_refusal``) when ``model`` is not a CPU route.
    """
    limits = limits or IntakeLimits()
    kind = file_type(path, limits)
    if not kind.native:
        return None
    if route(model).backend != "lambda":
        raise route_refusal(kind.value)
    started = time.perf_counter()
    native, units = read_native(path, pages=pages, limits=limits, html=html_content(options))
    reader = _PictureReader(engine, language=language, options=options or {}, limits=limits)
    converted = time.perf_counter() - started
    result_pages: list[Page] = []
    attachments = Attachments()
    for done, unit in enumerate(units, start=1):
        if unit.attachment is not None:  # an email's attachment: read by its own reader and route
            result_pages.extend(read_attachment(unit, engine=engine, language=language, options=options or {}, limits=limits,
                                                read_unit=reader.page, found=attachments))
        else:
            result_pages.append(reader.page(unit))
        if on_page is not None:
            on_page(done, len(units))
    if any(unit.part for unit in units):  # an email: its pages numbered in order, each marked with its part
        for number, page in enumerate(result_pages, start=1):
            page["page"] = number
            page.setdefault("part", "message")
    timings = {"native": converted, "picture_ocr": reader.seconds, "ocr": time.perf_counter() - started}
    info = reader.engine_info or attachments.engine_info or engine.info
    if not reader.read and attachments.engine_info is None:  # no picture or attachment needed a model: none ran
        info = {**info, "models": []}
    unread = attachments.warning()
    found = [*reader.warnings, *attachments.warnings, *_warnings(native, reader), *([unread] if unread else [])]
    if not any(page_text(page).strip() for page in result_pages):  # never a silent empty: say what each reader saw
        found.append(no_text_warning(f"{native.kind.upper()} file", [*native.notes.seen, *reader.seen()]))
    result = build_result(job_id, model, info, result_pages, timings, found)
    result["document_type"] = native.kind
    raw = {"document_type": native.kind, "unit": native.unit, "pictures": reader.raw}
    return result, raw


class _PictureReader:
    """Reads a unit's embedded pictures with the job's engine and builds its result page."""

    def __init__(self, engine: Engine, *, language: str, options: dict[str, Any], limits: IntakeLimits) -> None:
        self.engine = engine
        self.language = language
        self.options = options
        self.limits = limits
        self.seconds = 0.0
        self.read = 0
        self.unread = 0
        self.engine_info: Any = None
        self.warnings: list[ResultWarning] = []
        self.raw: list[dict[str, Any]] = []
        self._seen: dict[bytes, Page | None] = {}  # one picture placed twice (a logo on every slide) is read once

    def seen(self) -> list[str]:
        """What the engine saw in the file's pictures, for a ``no_text`` warning."""
        return [f"{self.read} embedded {'picture' if self.read == 1 else 'pictures'} read by OCR with no text"] if self.read else []

    def page(self, unit: NativePage) -> Page:
        texts: dict[str, str] = {}
        lines: dict[str, list[Line]] = {}
        for ref in unit.picture_refs():
            found = self._picture(unit.pictures[ref])
            if found is not None:
                texts[ref] = page_text(found)
                lines[ref] = found["lines"]
                self.raw.append({"page": unit.number, "picture": ref, "text": texts[ref]})
        content = page_content(unit, texts, lines)
        page: Page = {"page": unit.number, "width": 0, "height": 0, "scale": 0.0, "unit": unit.unit,
                      "text_source": "mixed" if any(texts.values()) else "native",
                      "lines": content.lines, "blocks": content.blocks, "markdown": content.markdown}
        if unit.name is not None:
            page["name"] = unit.name
        if unit.part is not None:
            page["part"] = unit.part
        return page

    def _picture(self, data: bytes) -> Page | None:
        """The engine's page for one picture; ``None`` when it cannot or need not be read."""
        key = hashlib.sha256(data).digest()
        if key not in self._seen:
            self._seen[key] = self._read_picture(data)
        return self._seen[key]

    def _read_picture(self, data: bytes) -> Page | None:
        if self.read >= self.limits.max_pictures:
            self.unread += 1
            return None
        png = _as_png(data, self.limits)
        if png is None:
            self.unread += 1
            return None
        if png == b"":
            return None  # too small to hold text
        self.read += 1
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="picture-") as tmp:
            picture = Path(tmp) / "picture.png"
            picture.write_bytes(png)
            output = self.engine.predict(picture, language=self.language, options=self.options)
        self.seconds += time.perf_counter() - started
        self.engine_info = self.engine_info or output.engine
        self.warnings.extend(w for w in output.warnings if w not in self.warnings)
        return output.pages[0] if output.pages else None


def _as_png(data: bytes, limits: IntakeLimits) -> bytes | None:
    """The picture as an RGB PNG the engine's intake reads; ``b""`` when too small for text; ``None`` when it
    cannot be decoded within the image bounds (a vector drawing, a damaged file, a decompression bomb)."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > limits.max_image_pixels:
                    return None
                if min(image.width, image.height) < MIN_PICTURE_SIDE:
                    return b""
                rgba = _within_page_budget(image, limits.max_page_pixels).convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))  # a transparent screenshot's text stays dark on white
        buffer = io.BytesIO()
        flat.save(buffer, "PNG", compress_level=1)  # read back at once by the engine: speed over size
        return buffer.getvalue()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning, JobError):
        return None


def _within_page_budget(image: Any, max_pixels: int) -> Any:
    """The picture shrunk by a whole factor to at most ``max_pixels`` (the engine would shrink it to the page budget
    anyway), before it is converted: a JPEG decoded at that fraction of its size (``draft``), any other reduced as
    it is decoded, so a picture near the image limit costs a second and a third of its memory, not a minute."""
    pixels = image.width * image.height
    if pixels <= max_pixels:
        return image
    factor = math.ceil(math.sqrt(pixels / max_pixels))
    image.draft("RGB", (image.width // factor, image.height // factor))
    factor = math.ceil(math.sqrt(image.width * image.height / max_pixels))
    if factor <= 1:
        return image
    try:
        return image.reduce(factor)
    except ValueError:  # a mode reduce does not average (a palette, one bit a pixel): every factor-th pixel
        from PIL import Image

        return image.resize((max(1, image.width // factor), max(1, image.height // factor)), Image.Resampling.NEAREST)


def _warnings(native: NativeFile, reader: _PictureReader) -> list[ResultWarning]:
    found: list[ResultWarning] = list(native.notes.warnings)  # a fallback reader's converter_fallback
    if native.macro_enabled:
        found.append({
            "code": MACROS_IGNORED, "requested": f"{native.kind} with macros", "ran": f"{native.kind} content",
            "reason": "a macro-enabled Office file (vbaProject.bin)",
            "message": "The file contains macros: its content was read, and its macros were neither run nor read.",
        })
    unread = reader.unread + native.notes.unplaced_pictures
    if unread:
        total = reader.read + unread
        found.append({
            "code": PICTURES_UNREAD, "requested": f"{total} pictures", "ran": f"{reader.read} pictures read",
            "reason": f"{unread} could not be decoded as raster images (vector drawings such as EMF), were beyond "
                      f"the {reader.limits.max_pictures}-picture limit, or could not be placed in the text by a fallback reader",
            "message": f"{unread} of the {total} pictures in the file were not read; their text is not in the result.",
        })
    return found
