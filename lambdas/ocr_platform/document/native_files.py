"""Files read from their own content rather than as page images: Office (DOCX, PPTX, XLSX) and HTML, and the other
formats of ``ocr_platform.document.other_formats`` (legacy Office, OpenDocument, EPUB, email, RTF, CSV, Markdown,
plain text).

``native_file`` tells such a file from its bytes (intake asks it before it looks for a PDF or an image) and
checks it; ``NativeFile.read`` reads the selected units (``ocr_platform.document.native_pages``). They are read on
the CPU routes only (``NATIVE_ROUTES``): ``route_refusal`` is the ``unsupported_type`` a ``paddleocr-vl`` job of
such a file ends with.

>>> print(route_refusal("docx").message)  # doctest: +NORMALIZE_WHITESPACE
This DOCX file is read from its own content on the CPU routes (pp-ocrv5, pp-ocrv6, pp-structurev3), not by
paddleocr-vl, which reads PDFs and images; resubmit it with one of those models.
>>> head_refusal(b"PK\x03\x04...").message.startswith("This Office file")
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.document.native_pages import NativePage, ReadNotes, Unit
from ocr_platform.document.office import OLE_MAGIC, ZIP_MAGIC, OfficeFile, office_kind, read_office, refuse_ole
from ocr_platform.document.work_budget import WorkBudget, check_html
from ocr_platform.document.zip_safety import ZipLimits, checked_names

#: The models that read Office and HTML files: the CPU processor's.
NATIVE_ROUTES = tuple(name for name, spec in MODEL_TABLE.items() if spec.backend == "lambda")
#: A result warning's ``code`` when a macro-enabled Office file was read without its macros.
MACROS_IGNORED = "macros_ignored"
#: A result warning's ``code`` when an HTML page was read without its navigation and boilerplate.
HTML_MAIN_CONTENT = "html_main_content"


@dataclass(frozen=True)
class NativeFile:
    """An Office or HTML file that passed its checks.

    Attributes:
        kind: ``docx``, ``pptx``, ``xlsx`` or ``html``.
        unit: what one of its pages is: ``document`` (DOCX, HTML), ``slide`` (PPTX) or ``sheet`` (XLSX).
        unit_count: how many units (pages) it has.
        macro_enabled: an Office file with macros (``.docm``, ``.pptm``, ``.xlsm``), read without running them.
        notes: what ``read`` adds to the result: a ``converter_fallback`` warning, pictures it could not place.
    """

    path: Path
    kind: str
    unit: Unit
    unit_count: int
    macro_enabled: bool = False
    office: OfficeFile | None = None
    notes: ReadNotes = field(default_factory=ReadNotes)
    budget: WorkBudget = field(default_factory=WorkBudget)

    def read(self, pages: list[int], *, html: str = "main") -> list[NativePage]:
        """The ``pages`` (1-based units) of the file, read from its content; an HTML file's main content, or with
        ``html`` ``page`` the whole page (``ocr_platform.document.html_main``)."""
        if self.office is not None:
            return read_office(self.path, self.office, pages, self.notes)
        if self.kind != "html":
            from ocr_platform.document.other_formats import read_other

            return read_other(self.path, self.kind, pages, self.notes, self.budget)
        from ocr_platform.document.html_input import read_html
        from ocr_platform.document.office_readers import has_text

        data = self.path.read_bytes()
        page = read_html(data)
        if html == "main":
            page = self._main_content(data, page)
        if not has_text([(None, page.markdown)], page.pictures):
            self.notes.seen.append("Beautiful Soup and markdownify read the page with no text")
        return [page] if 1 in pages else []

    def _main_content(self, data: bytes, whole: NativePage) -> NativePage:
        from ocr_platform.document.html_input import read_html
        from ocr_platform.document.html_main import main_content

        summary = main_content(data, whole.markdown)
        if summary is None:
            return whole
        main = read_html(summary.encode("utf-8"))
        kept, total = len(main.markdown.split()), len(whole.markdown.split())
        self.notes.warnings.append({
            "code": HTML_MAIN_CONTENT, "requested": "the HTML page", "ran": "its main content",
            "reason": f"{kept} of the page's {total} words kept (readability-lxml)",
            "message": "The page's navigation and boilerplate were left out; set the job's option html to \"page\" to read the whole page.",
        })
        return main


def native_file(path: Path, head: bytes, *, zip_limits: ZipLimits, max_html_bytes: int, budget: WorkBudget | None = None) -> NativeFile | None:
    """The Office or HTML file at ``path`` (whose first bytes are ``head``), checked; ``None`` for any other file.

    Raises ``JobError`` for a file that is one but cannot be read: ``encrypted_document``, ``unsupported_type``
    (a legacy ``.doc``, a ZIP that is no Office file), ``corrupt_document``, ``archive_too_large``, or
    ``document_too_large`` (HTML over ``max_html_bytes``, or either over its work ``budget``,
    ``ocr_platform.document.work_budget``).
    """
    from ocr_platform.document import other_formats

    budget = budget or WorkBudget()
    if head.startswith(ZIP_MAGIC):
        other = other_formats.probe_zip(path, checked_names(path, zip_limits))
        if other is not None:
            return NativeFile(path, other.kind, other.unit, other.unit_count, budget=budget)
        office = office_kind(path, zip_limits, budget)
        return NativeFile(path, office.kind, office.unit, office.unit_count, office.macro_enabled, office, budget=budget)
    if head.startswith(OLE_MAGIC):
        other = other_formats.probe_ole(path)
        if other is None:
            raise refuse_ole(path)
        return NativeFile(path, other.kind, other.unit, other.unit_count, budget=budget)
    from ocr_platform.document.email_input import looks_like_email
    from ocr_platform.document.html_input import looks_like_html

    if looks_like_email(head) or not looks_like_html(head, fragments=False):  # a CSV or Markdown file may hold some HTML
        other = other_formats.probe_text(path, head, max_html_bytes, html_fragment=looks_like_html(head))
        if other is not None or not looks_like_html(head):
            return NativeFile(path, other.kind, other.unit, other.unit_count, budget=budget) if other is not None else None
    size = path.stat().st_size
    if size > max_html_bytes:
        raise JobError(ErrorCode.DOCUMENT_TOO_LARGE, f"The HTML file is {size:,} bytes; HTML files are read up to {max_html_bytes:,} "
                       "bytes. Split it, or print it to PDF.")
    check_html(path.read_bytes(), budget)
    return NativeFile(path, "html", "document", 1, budget=budget)


def head_refusal(head: bytes) -> JobError | None:
    """The ``unsupported_type`` of the GPU route for a file whose first bytes say it is an Office (a ZIP or OLE
    container) or HTML file, before any GPU is asked for; ``None`` for any other file."""
    from ocr_platform.document.email_input import looks_like_email
    from ocr_platform.document.html_input import looks_like_html
    from ocr_platform.document.magic import page_kind
    from ocr_platform.document.plain_text import text_kind

    if head.startswith((ZIP_MAGIC, OLE_MAGIC)):
        return route_refusal("Office")
    if looks_like_email(head):
        return route_refusal("email")
    if looks_like_html(head):
        return route_refusal("HTML")
    return route_refusal("text") if page_kind(head) is None and text_kind(head) is not None else None


def route_refusal(kind: str) -> JobError:
    """The ``unsupported_type`` of a route that does not read ``kind`` (``docx``, ``pptx``, ``xlsx``, ``html``) files."""
    label = kind if kind in ("Office", "email", "text") else kind.upper()
    return JobError(
        ErrorCode.UNSUPPORTED_TYPE,
        f"This {label} file is read from its own content on the CPU routes ({', '.join(NATIVE_ROUTES)}), not by paddleocr-vl, "
        "which reads PDFs and images; resubmit it with one of those models.",
    )
