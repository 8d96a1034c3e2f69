"""Document intake: from a file on disk to page images an engine can read, refusing bad input early.

Shared by the CPU processor and the SageMaker endpoint, so both refuse the same inputs with the same
codes. The type comes from the bytes, never the file name. Every refusal is a ``JobError``:

- ``empty_document``: zero bytes, or a PDF with no pages;
- ``unsupported_type``: none of ``SUPPORTED_TYPES`` (or a file read from its own content, an Office, HTML,
  email or text file, opened as page images: those are read by ``read_native``);
- ``encrypted_document`` / ``archive_too_large``: a password-protected Office file, or one that would unpack
  to too much (``ocr_platform.document.native_files``);
- ``document_too_large``: more bytes than ``IntakeLimits.max_bytes``;
- ``encrypted_pdf`` / ``corrupt_document``: a password-protected or unreadable (truncated) file;
- ``too_many_pages``: more selected pages than ``IntakeLimits.max_pages``;
- ``invalid_pages``: a page selection outside the document;
- ``page_too_large``: a page that would exceed the pixel budget even at the smallest allowed scale, a PDF page
  whose drawing instructions unpack past ``max_page_content_bytes``, or an image larger than
  ``max_image_pixels`` (decompression bombs are refused before decoding).

Pages are rendered one at a time, so memory holds one page image at once.

>>> parse_page_selection("1-3,7", 10)
[1, 2, 3, 7]
>>> parse_page_selection(None, 3)
[1, 2, 3]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocr_platform.core import defaults
from ocr_platform.core.chunks import PAGES_PATTERN
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.magic import SUPPORTED_TYPES, page_kind
from ocr_platform.document.native_files import NativeFile, native_file, route_refusal
from ocr_platform.document.native_pages import NativePage
from ocr_platform.document.pdf_budget import PdfContentBudget
from ocr_platform.document.work_budget import WorkBudget
from ocr_platform.document.zip_safety import ZipLimits

if TYPE_CHECKING:  # Pillow is imported when a document is opened, not with this module
    from PIL import Image

    from ocr_platform.document.text_layer import TextLayer


class DocumentType(StrEnum):
    PDF = "pdf"
    PNG = "png"
    JPEG = "jpeg"
    TIFF = "tiff"
    BMP = "bmp"
    WEBP = "webp"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    HTML = "html"
    DOC = "doc"
    XLS = "xls"
    PPT = "ppt"
    ODT = "odt"
    ODS = "ods"
    ODP = "odp"
    RTF = "rtf"
    EPUB = "epub"
    CSV = "csv"
    MD = "md"
    TXT = "txt"
    EML = "eml"
    MSG = "msg"

    @property
    def native(self) -> bool:
        """Read from the file's own content (Office, HTML), not rendered to page images."""
        return self in NATIVE_TYPES


#: The types read as page images; every other is read from its own content (``native``).
PAGE_TYPES = frozenset({DocumentType.PDF, DocumentType.PNG, DocumentType.JPEG, DocumentType.TIFF, DocumentType.BMP, DocumentType.WEBP})
NATIVE_TYPES = frozenset(set(DocumentType) - PAGE_TYPES)


@dataclass(frozen=True)
class IntakeLimits:
    """Bounds on what a job may ask the engine to read.

    Attributes:
        max_bytes: largest accepted file (default 200 MiB).
        max_pages: most pages one job may process (after the page selection); ``defaults.MAX_PAGES``.
        render_scale: PDF render scale in pixels per PDF point (2.0 = 144 DPI).
        max_page_pixels: pixel budget of one page image; a larger page is rendered (or resized) smaller.
        min_scale: below this scale a page would be unreadable, so it is refused instead.
        max_image_pixels: a raster image header claiming more pixels than this is refused undecoded.
        max_page_content_bytes: a PDF page whose drawing instructions unpack to more is ``page_too_large``, before
            pdfium loads it (``ocr_platform.document.pdf_budget``).
        budget: the work one Office or HTML file may ask for (``ocr_platform.document.work_budget``); by default the
            defaults, each raised or lowered by its ``OCR_MAX_*`` variable where that is set (as on the processor).
    """

    max_bytes: int = defaults.MAX_DOCUMENT_BYTES
    max_pages: int = defaults.MAX_PAGES
    render_scale: float = 2.0
    max_page_pixels: int = 25_000_000
    min_scale: float = 0.25
    max_image_pixels: int = 80_000_000
    max_unpacked_bytes: int = defaults.MAX_UNPACKED_BYTES
    max_zip_ratio: int = defaults.MAX_ZIP_RATIO
    max_zip_entries: int = defaults.MAX_ZIP_ENTRIES
    max_unpacked_xml_bytes: int = defaults.MAX_UNPACKED_XML_BYTES
    max_html_bytes: int = defaults.MAX_HTML_BYTES
    max_pictures: int = defaults.MAX_EMBEDDED_PICTURES
    budget: WorkBudget = field(default_factory=WorkBudget.from_env)
    max_page_content_bytes: int = defaults.max_page_content_bytes()

    def zip_limits(self) -> ZipLimits:
        return ZipLimits(self.max_unpacked_bytes, self.max_zip_ratio, self.max_zip_entries, self.max_unpacked_xml_bytes)


@dataclass
class PageImage:
    """One page as the engine sees it.

    Attributes:
        page: 1-based page number in the source document.
        image: RGB ``PIL.Image``.
        scale: pixels of ``image`` per PDF point (PDF) or per source pixel (images; 1.0 unless resized).
        text_layer: the PDF page's own text in ``image``'s pixels, when the document was opened with
            ``text_layers=True`` (``ocr_platform.document.text_layer``); ``None`` for images.
    """

    page: int
    image: Image.Image
    scale: float
    text_layer: TextLayer | None = None

    @property
    def width(self) -> int:
        return self.image.width

    @property
    def height(self) -> int:
        return self.image.height

    def bgr(self) -> Any:
        """The page as a contiguous BGR ``numpy`` array, the channel order PaddleOCR's models take."""
        import numpy as np

        return np.ascontiguousarray(np.asarray(self.image)[:, :, ::-1])




def parse_page_selection(spec: str | None, page_count: int) -> list[int]:
    """The sorted, distinct 1-based pages named by ``spec`` (``None`` = all); ``JobError`` when out of range."""
    if not spec:
        return list(range(1, page_count + 1))
    if not PAGES_PATTERN.match(spec):
        raise JobError(ErrorCode.INVALID_PAGES, f'The page selection {spec!r} must look like "1-3,7".')
    selected: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        start, end = int(first), int(last or first)
        if start < 1 or end < start:
            raise JobError(ErrorCode.INVALID_PAGES, f"The page range {part.strip()!r} is not a valid 1-based range.")
        if end > page_count:
            raise JobError(
                ErrorCode.INVALID_PAGES, f"The page selection {spec!r} names page {end}, but the document has {page_count} page(s)."
            )
        selected.update(range(start, end + 1))
    return sorted(selected)


def detect_type(head: bytes) -> DocumentType:
    """The document type from its first bytes (magic numbers), whatever the file is called."""
    if not head:
        raise JobError(ErrorCode.EMPTY_DOCUMENT, "The file is empty.")
    kind = page_kind(head)
    if kind is not None:
        return DocumentType(kind)
    raise JobError(ErrorCode.UNSUPPORTED_TYPE, f"The file is not a supported document type; send {SUPPORTED_TYPES}.")


class Document:
    """An opened document: its type, page count, the selected pages, and a lazy page renderer.

    Use ``open_document`` rather than constructing it.
    """

    def __init__(
        self, path: Path, doc_type: DocumentType, page_count: int, pages: list[int], limits: IntakeLimits, handle: object, *, text_layers: bool = False
    ) -> None:
        self.path = path
        self.type = doc_type
        self.page_count = page_count
        self.selected_pages = pages
        self.limits = limits
        self.text_layers = text_layers
        self._handle = handle
        self._content: PdfContentBudget | None = None

    def pages(self) -> Iterator[PageImage]:
        """Render the selected pages one by one."""
        for number in self.selected_pages:
            yield self.render(number)

    def render(self, number: int) -> PageImage:
        """Render page ``number`` (1-based); a page that cannot be is its own error (the page loop goes on)."""
        if self.type is DocumentType.PDF:
            return self._render_pdf_page(number)
        return self._image_frame(number)

    def _render_pdf_page(self, number: int) -> PageImage:
        import pypdfium2 as pdfium

        if self._content is None:
            self._content = PdfContentBudget(self.path, self.limits.max_page_content_bytes)
        self._content.check(number)
        page = self._handle[number - 1]  # type: ignore[index]
        try:
            width_pt, height_pt = page.get_size()
            scale = fit_scale(width_pt, height_pt, self.limits, page=number)
            try:
                bitmap = page.render(scale=scale)
            except pdfium.PdfiumError as err:
                raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"Page {number} of the PDF cannot be rendered: {err}") from None
            image = bitmap.to_pil().convert("RGB")
            bitmap.close()
            layer = self._text_layer(page, scale, number - 1) if self.text_layers else None
        finally:
            page.close()
        return PageImage(number, image, scale, layer)

    @staticmethod
    def _text_layer(page: Any, scale: float, index: int) -> TextLayer:
        from ocr_platform.document.text_layer import read_text_layer

        textpage = page.get_textpage()
        try:
            return read_text_layer(page, textpage, scale=scale, index=index)
        finally:
            textpage.close()

    def _image_frame(self, number: int) -> PageImage:
        image = self._handle
        try:
            image.seek(number - 1)  # type: ignore[attr-defined]
            frame = image.convert("RGB")  # type: ignore[attr-defined]
        except (OSError, EOFError, ValueError) as err:
            raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"Page {number} of the image cannot be decoded: {err}") from None
        scale = fit_scale(frame.width, frame.height, self.limits, page=number, cap=1.0)
        if scale < 1.0:
            from PIL import Image

            frame = frame.resize((max(1, round(frame.width * scale)), max(1, round(frame.height * scale))), Image.Resampling.LANCZOS)
        return PageImage(number, frame, scale)


def fit_scale(width: float, height: float, limits: IntakeLimits, *, page: int, cap: float | None = None) -> float:
    """The render scale for a page: ``render_scale`` (or ``cap``), reduced to fit the pixel budget."""
    scale = cap if cap is not None else limits.render_scale
    area = width * height
    if area <= 0:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"Page {page} has no area ({width} x {height}).")
    if area * scale * scale > limits.max_page_pixels:
        scale = math.sqrt(limits.max_page_pixels / area)
    reference = cap if cap is not None else limits.render_scale
    if scale < limits.min_scale * reference:
        raise JobError(
            ErrorCode.PAGE_TOO_LARGE,
            f"Page {page} is {width:.0f} x {height:.0f}; it cannot be read within the {limits.max_page_pixels:,}-pixel page budget.",
        )
    return scale


@contextmanager
def open_document(path: str | Path, *, pages: str | None = None, limits: IntakeLimits | None = None, text_layers: bool = False) -> Iterator[Document]:
    """Open ``path``, check it against ``limits`` and the page selection, and yield a ``Document``.

    With ``text_layers``, each rendered PDF page also carries its own text (``PageImage.text_layer``).

    >>> with open_document("scan.pdf", pages="1-2") as doc:      # doctest: +SKIP
    ...     for page in doc.pages():
    ...         print(page.page, page.width, page.height, page.scale)
    """
    limits = limits or IntakeLimits()
    source = Path(path)
    size = source.stat().st_size
    if size > limits.max_bytes:
        raise JobError(ErrorCode.DOCUMENT_TOO_LARGE, f"The file is {size:,} bytes; the limit is {limits.max_bytes:,}.")
    doc_type = file_type(source, limits)
    if doc_type.native:
        raise route_refusal(doc_type.value)
    if doc_type is DocumentType.PDF:
        with _open_pdf(source) as (pdf, page_count):
            yield _checked(source, doc_type, page_count, pages, limits, pdf, text_layers=text_layers)
    else:
        with _open_image(source, limits) as (image, page_count):
            yield _checked(source, doc_type, page_count, pages, limits, image)


def _checked(
    source: Path, doc_type: DocumentType, page_count: int, pages: str | None, limits: IntakeLimits, handle: object, *, text_layers: bool = False
) -> Document:
    selected = _checked_selection(page_count, pages, limits)
    return Document(source, doc_type, page_count, selected, limits, handle, text_layers=text_layers)


@contextmanager
def _open_pdf(source: Path) -> Iterator[tuple[object, int]]:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(source))
    except pdfium.PdfiumError as err:
        if getattr(err, "err_code", None) == 4:
            raise JobError(ErrorCode.ENCRYPTED_PDF, "The PDF is password protected; remove the password and resubmit.") from None
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The PDF cannot be read (truncated or damaged): {err}") from None
    try:
        yield pdf, len(pdf)
    finally:
        pdf.close()


@contextmanager
def _open_image(source: Path, limits: IntakeLimits) -> Iterator[tuple[object, int]]:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(source)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise JobError(ErrorCode.PAGE_TOO_LARGE, "The image claims more pixels than any page can have; refused undecoded.") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The image cannot be read (truncated or damaged): {err}") from None
    try:
        if image.width * image.height > limits.max_image_pixels:
            raise JobError(
                ErrorCode.PAGE_TOO_LARGE,
                f"The image is {image.width} x {image.height} pixels; the limit is {limits.max_image_pixels:,} pixels.",
            )
        yield image, getattr(image, "n_frames", 1)
    finally:
        image.close()


def file_type(path: Path, limits: IntakeLimits | None = None) -> DocumentType:
    """The type of the file at ``path`` from its bytes; an Office or HTML file is checked (``native_files``) on the way."""
    native = _native(path, limits or IntakeLimits())
    if native is not None:
        return DocumentType(native.kind)
    with path.open("rb") as handle:
        return detect_type(handle.read(1024))


def _native(path: Path, limits: IntakeLimits) -> NativeFile | None:
    with path.open("rb") as handle:
        head = handle.read(1024)
    if not head:
        raise JobError(ErrorCode.EMPTY_DOCUMENT, "The file is empty.")
    return native_file(path, head, zip_limits=limits.zip_limits(), max_html_bytes=limits.max_html_bytes, budget=limits.budget)


def read_native(path: Path, *, pages: str | None, limits: IntakeLimits, html: str = "main") -> tuple[NativeFile, list[NativePage]]:
    """The Office or HTML file at ``path`` and its selected units (pages), read from its content.

    ``unsupported_type`` for any other file; the intake's ``JobError`` for bad input.
    """
    native = _native(path, limits)
    if native is None:
        raise JobError(ErrorCode.UNSUPPORTED_TYPE, "The file is not read from its own content (an Office, OpenDocument, HTML, email or text file).")
    return native, native.read(_native_selection(path, native, pages, limits), html=html)


def _native_selection(path: Path, native: NativeFile, pages: str | None, limits: IntakeLimits) -> list[int]:
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise JobError(ErrorCode.DOCUMENT_TOO_LARGE, f"The file is {size:,} bytes; the limit is {limits.max_bytes:,}.")
    return _checked_selection(native.unit_count, pages, limits)


def _checked_selection(page_count: int, pages: str | None, limits: IntakeLimits) -> list[int]:
    if page_count == 0:
        raise JobError(ErrorCode.EMPTY_DOCUMENT, "The document has no pages.")
    selected = parse_page_selection(pages, page_count)
    if len(selected) > limits.max_pages:
        raise JobError(
            ErrorCode.TOO_MANY_PAGES,
            f"{len(selected)} pages selected; at most {limits.max_pages} per job. Split the document or select pages.",
        )
    return selected


def selected_pages(path: Path, *, pages: str | None, limits: IntakeLimits) -> list[int]:
    """The pages of the document at ``path`` that the job reads (an Office or HTML file's units: its slides,
    sheets, or the one flowing document); the intake's ``JobError`` for bad input."""
    native = _native(path, limits)
    if native is not None:
        return _native_selection(path, native, pages, limits)
    with open_document(path, pages=pages, limits=limits) as document:
        return list(document.selected_pages)
