"""The page loop every engine runs: open the document, read each selected page, time it, report progress.

An engine says only how it reads one rendered page (``ReadPage``); ``read_pages`` does the rest the
same way for all of them: intake (type check, limits, page selection, rendering), turning the page
upright when the engine passes an ``orientation`` classifier (and mapping what it read back onto the
page as submitted), a PDF page's own text layer where the engine passes a ``TextLayerChoice``
(``text_layer: auto``; OCR then reads only what the layer lacks), the page number, size, scale,
``rotation`` and ``text_source`` of each result page, the raw output per page for raw.json,
``render``/``orientation``/``predict`` timings, ``on_page(done, total)`` after each page, a PDF page's form
fields, a form's key-value pairs and check boxes where the engine asks (``forms=True``, ``engines.forms``), and
the pages that failed (``pages_failed``) while the others are read.

>>> from ocr_platform.document.intake import PageImage
>>> def blank(image: PageImage) -> PageReading:
...     return PageReading(content={"lines": []}, raw={"width": image.width})
>>> pages = read_pages("scan.pdf", pages="1-2", limits=IntakeLimits(), read_page=blank)  # doctest: +SKIP
>>> [p["page"] for p in pages.pages], pages.raw_pages[0]                                 # doctest: +SKIP
([1, 2], {'page': 1, 'rotation': 0, 'width': 1191})
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ocr_platform.core.page_failures import PageFailure, is_page_error, page_failure
from ocr_platform.core.results import Page
from ocr_platform.document.form_fields import at_scale, page_form_fields
from ocr_platform.document.intake import DocumentType, IntakeLimits, PageImage, open_document
from ocr_platform.engines.conversion import PageContent
from ocr_platform.engines.forms import read_forms
from ocr_platform.engines.orientation import OrientedPage, PageOrientation, to_submitted
from ocr_platform.engines.text_layer_choice import TextLayerChoice

ProgressCallback = Callable[[int, int], None]
logger = logging.getLogger(__name__)


@dataclass
class PageReading:
    """What an engine read on one page.

    Attributes:
        content: the result page's ``lines`` (and ``blocks``, ``markdown`` from a layout engine).
        raw: the engine's own output for the page, saved in raw.json beside the page number.
    """

    content: PageContent
    raw: dict[str, Any] = field(default_factory=dict)


ReadPage = Callable[[PageImage], PageReading]


@dataclass
class ReadPages:
    """The pages ``read_pages`` read.

    Attributes:
        pages: result pages in the result.json page shape, in document order.
        raw_pages: ``{"page": n, "rotation": r, **reading.raw}`` per page, for raw.json.
        timings: ``render`` (intake: decoding and rendering pages, reading text layers), ``orientation``
            (classifying and turning pages; 0 when off), ``predict`` (the engine's ``read_page`` on whole
            pages) and, with a text layer choice, ``layer_check`` and ``layer_ocr``, in seconds.
            With ``forms``, ``forms`` (pairing labels and answers, finding check boxes).
        pages_failed: the pages that could not be rendered or read (``ocr_platform.core.page_failures``).
    """

    pages: list[Page]
    raw_pages: list[dict[str, Any]]
    timings: dict[str, float]
    pages_failed: list[PageFailure] = field(default_factory=list)


def read_pages(
    path: Path | str,
    *,
    pages: str | None,
    limits: IntakeLimits,
    read_page: ReadPage,
    on_page: ProgressCallback | None = None,
    orientation: PageOrientation | None = None,
    text_layer: TextLayerChoice | None = None,
    forms: bool = False,
) -> ReadPages:
    """Read the ``pages`` selection of the document at ``path`` with ``read_page``, one page at a time.

    With ``orientation``, each page is turned upright before ``read_page`` sees it, and the lines and
    blocks it returns are mapped back onto the page as submitted (``engines.orientation``).

    With ``text_layer``, a PDF page whose own text ``text_layer`` accepts is read from it, and only the
    regions it lacks go to ``read_page`` (upright, as cropped); a page it does not accept is read whole.
    A layout engine's ``text_layer`` (``layout=True``) reads every page whole and puts the layer's text
    in the blocks it covers. Every page says where its text came from in ``text_source``.

    Intake refusals (unsupported type, encrypted PDF, limits, page selection) raise the intake's
    ``JobError`` before any page is read. A page that cannot be rendered or decoded, or that ``read_page``
    raises on (``core.page_failures.is_page_error``), is left out and named in ``pages_failed``; the loop
    goes on with the next page. Any other error (a ``JobError`` about the whole job) ends the loop.

    A PDF page with form fields carries them in ``form_fields`` (``document.form_fields``), their boxes in
    the page's pixels like the lines.

    With ``forms``, every page with geometry carries ``key_values`` and ``selection_marks`` (``engines.forms``;
    empty lists on a page without a form); a PDF page's form fields are that page's.
    """
    result_pages: list[Page] = []
    raw_pages: list[dict[str, Any]] = []
    failed: list[PageFailure] = []
    timings = {"render": 0.0, "orientation": 0.0, "predict": 0.0}
    with open_document(path, pages=pages, limits=limits, text_layers=text_layer is not None) as doc:
        total = len(doc.selected_pages)
        fields = page_form_fields(path, doc.selected_pages) if doc.type is DocumentType.PDF else {}
        for done, number in enumerate(doc.selected_pages, start=1):
            rendering = time.perf_counter()
            image = _unless_page_fails(partial(doc.render, number), number, failed, rendering=True)
            timings["render"] += time.perf_counter() - rendering
            read = image and _unless_page_fails(partial(_read, image, read_page, orientation, text_layer, timings), number, failed)
            if image and read:
                content, rotation, source, raw = read
                header = {**_page_header(image), "rotation": rotation, "text_source": source}
                if number in fields:
                    header["form_fields"] = at_scale(fields[number], image.scale)
                page: Page = {**header, **content}  # type: ignore[typeddict-item]
                if forms:
                    started = time.perf_counter()
                    page["key_values"], page["selection_marks"] = read_forms(
                        image.image, page["lines"], fields=page.get("form_fields", []), rotation=rotation,
                        tables=[b["bbox"] for b in page.get("blocks", []) if b.get("label") == "table" and b.get("bbox")])
                    timings["forms"] = timings.get("forms", 0.0) + time.perf_counter() - started
                result_pages.append(page)
                raw_pages.append({"page": number, "rotation": rotation, **raw})
            if on_page:
                on_page(done, total)
    timings.update(text_layer.timings if text_layer else {})
    return ReadPages(pages=result_pages, raw_pages=raw_pages, timings=timings, pages_failed=failed)


T = TypeVar("T")


def _unless_page_fails(step: Callable[[], T], number: int, failed: list[PageFailure], *, rendering: bool = False) -> T | None:
    """``step()``; ``None`` when it raised a page's error (``is_page_error``), recorded in ``failed``."""
    try:
        return step()
    except Exception as err:
        if not is_page_error(err):
            raise
        failure = page_failure(number, err, rendering=rendering)
        logger.warning("Page %d failed; the job goes on without it: %s", number, failure["message"], exc_info=True)
        failed.append(failure)
        return None


def _read(
    image: PageImage, read_page: ReadPage, orientation: PageOrientation | None, text_layer: TextLayerChoice | None,
    timings: dict[str, float],
) -> tuple[PageContent, int, str, dict[str, Any]]:
    """Read one rendered page: its content on the page as submitted, rotation, text source and raw output."""
    orienting = time.perf_counter()
    layered = None
    if text_layer is not None and not text_layer.layout and image.text_layer is not None:
        layered = text_layer.read(image, image.text_layer, read_region=lambda region: read_page(region).content)
        orienting = time.perf_counter()
    if layered is not None and layered.content is not None:
        return layered.content, 0, layered.source, {"text_layer": layered.raw}
    oriented = orientation.upright(image) if orientation else OrientedPage(image=image, rotation=0)
    reading = time.perf_counter()
    timings["orientation"] += reading - orienting
    page = read_page(oriented.image)
    timings["predict"] += time.perf_counter() - reading
    rotation, source = oriented.rotation, "ocr"
    content = to_submitted(page.content, rotation, width=image.width, height=image.height)
    if text_layer is not None and text_layer.layout and image.text_layer is not None:
        layered = text_layer.read_layout(image, image.text_layer, content)
        if layered.content is not None:
            content, source = layered.content, layered.source
    return content, rotation, source, {**page.raw, **({"text_layer": layered.raw} if layered is not None else {})}


def _page_header(image: PageImage) -> dict[str, Any]:
    return {"page": image.page, "width": image.width, "height": image.height, "scale": round(image.scale, 4)}
