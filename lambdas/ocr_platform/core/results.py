"""result.json: the output contract every engine and backend produces (docs/contracts.md, "result.json").

Engines return pages; ``build_result`` wraps them with the job, the engine that really ran, the
warnings about how the result differs from what was asked (a substitute engine ran) and the timings.
``validate_result`` checks a document that came from elsewhere (the SageMaker endpoint) before it is
published under ``results/``.

>>> page = Page(page=1, width=100, height=50, scale=1.0, lines=[Line(text="hi", polygon=[[0, 0], [9, 0], [9, 9], [0, 9]], score=0.98)])
>>> doc = build_result("j1", "pp-ocrv5", EngineInfo(name="fake", models=["m"], version="0"), [page])
>>> (doc["page_count"], doc["text"])
(1, 'hi')
>>> validate_result(doc)["job_id"]
'j1'
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.page_failures import PageFailure, page_list
from ocr_platform.core.words import Word, estimated_words

PAGE_SEPARATOR = "\f"


class Line(TypedDict):
    text: str
    #: Absent where the file has no geometry (an Office or HTML page read from its content).
    polygon: NotRequired[list[list[float]]]
    score: float
    #: The line's words (``core.words``): the recogniser's alignment, the PDF's character boxes, else estimated.
    words: NotRequired[list[Word]]


class ContinuedFrom(TypedDict):
    """Where the table a block continues starts (``ocr_platform.core.tables``): that block's page number and index
    in the page's blocks, and how many of this part's first rows repeat the header (left out of the merged table)."""

    page: int
    block: int
    header_rows: int


class Block(TypedDict, total=False):
    label: str
    bbox: list[float]
    text: str
    html: str
    #: A picture's crop, relative to the job's result folder (``figures/00001-01.png``).
    image: str
    #: A table's part on this page that continues a table started on an earlier page (its ``html`` there is whole).
    continued_from: ContinuedFrom


class FormField(TypedDict):
    """One widget of a PDF form field on its page (``ocr_platform.document.form_fields``)."""

    name: str
    type: str
    value: str
    selected: NotRequired[bool]
    bbox: list[float]


class FormText(TypedDict):
    """A key's or a value's text on the page (``key_values``): its words, taken from the page's lines, and the
    quadrilateral around them, in the page's pixels."""

    text: str
    polygon: list[list[float]]
    words: list[Word]


class FormValue(FormText):
    """A key's value. A selection mark that answers the key is the value: ``state`` says its tick, ``text`` is
    ``:selected:`` or ``:unselected:`` and ``words`` is empty."""

    state: NotRequired[str]


class KeyValue(TypedDict):
    """A printed label (``key``) and its answer (``value``; ``None`` when the form leaves it blank), with how sure
    the pairing is (0-1). ``source`` says where it came from: ``layout`` (the page's text and marks) or
    ``form_field`` (the PDF's own form field, the truth for its page)."""

    key: FormText
    value: FormValue | None
    confidence: float
    source: str


class SelectionMark(TypedDict):
    """A check box or radio button on the page: ``selected`` or ``unselected``, its quadrilateral and how sure
    the state is (0-1)."""

    state: str
    polygon: list[list[float]]
    confidence: float


class Page(TypedDict):
    page: int
    width: int
    height: int
    scale: float
    rotation: NotRequired[int]
    text_source: NotRequired[str]
    script: NotRequired[str]
    language: NotRequired[str]
    lines: list[Line]
    blocks: NotRequired[list[Block]]
    markdown: NotRequired[str]
    # Office and HTML files (docs/using-it/office-and-html.md): a page is a unit of the file, ``document`` (the
    # whole flowing DOCX or HTML), ``slide`` or ``sheet``; a sheet's name; no geometry (width, height, scale 0).
    unit: NotRequired[str]
    name: NotRequired[str]
    #: An email's pages: the part each came from (``message``, ``attachment 1: invoice.pdf``) and its page there.
    part: NotRequired[str]
    part_page: NotRequired[int]
    form_fields: NotRequired[list[FormField]]
    # Forms (``options.features: ["forms"]``; always on pp-structurev3): label-answer pairs and check boxes.
    key_values: NotRequired[list[KeyValue]]
    selection_marks: NotRequired[list[SelectionMark]]


class EngineInfo(TypedDict):
    name: str
    models: list[str]
    version: str


#: A warning's ``code`` when another engine ran because the requested one cannot run in this runtime.
ENGINE_FALLBACK = "engine_fallback"
#: A warning's ``code`` when a file the job asked for in ``outputs`` was not written (result.json was).
OUTPUT_UNAVAILABLE = "output_unavailable"
#: A warning's ``code`` when some pages could not be read and were left out (``pages_failed`` names them).
PAGES_FAILED = "pages_failed"
#: A warning's ``code`` when a COMPLETED result holds no text at all: what each reader saw is its ``reason``.
NO_TEXT = "no_text"


class ResultWarning(TypedDict):
    """Something a caller must know about a COMPLETED result (on the job item and in result.json).

    Attributes:
        code: machine code: ``engine_fallback`` (another model ran), ``output_unavailable`` (a file the job
            asked for in ``outputs`` was not written), ``pages_failed`` (pages left out, ``core.page_failures``).
        requested: the model or pipeline the job asked for (for ``output_unavailable``, the file).
        ran: what really produced the result (for ``output_unavailable``, what was written instead).
        reason: why (the technical cause, e.g. the error that stopped the requested pipeline loading).
        message: one sentence a frontend can show to a person.
    """

    code: str
    requested: str
    ran: str
    reason: str
    message: str


def engine_fallback_warning(*, requested: str, ran: str, reason: str) -> ResultWarning:
    """The ``engine_fallback`` warning for a result that ``ran`` produced in place of ``requested``.

    >>> engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="no weights")["message"]
    'PP-StructureV3 is not available in this runtime, so this result comes from PP-OCRv5 instead.'
    """
    return {
        "code": ENGINE_FALLBACK,
        "requested": requested,
        "ran": ran,
        "reason": reason,
        "message": f"{requested} is not available in this runtime, so this result comes from {ran} instead.",
    }


def pages_failed_warning(failed: list[PageFailure], *, read: int) -> ResultWarning:
    """The ``pages_failed`` warning of a result that holds ``read`` pages and lacks the ``failed`` ones.

    >>> pages_failed_warning([{"page": 2, "code": "corrupt_document", "message": "Failed to load page."}], read=3)["message"]
    '1 of 4 pages could not be read (page 2); the result holds the other 3.'
    """
    total = read + len(failed)
    return {
        "code": PAGES_FAILED,
        "requested": f"{total} pages",
        "ran": f"{read} pages",
        "reason": "; ".join(f"page {f['page']}: {f['code']}" for f in failed[:10]),
        "message": f"{len(failed)} of {total} pages could not be read ({page_list(failed)}); the result holds the other {read}.",
    }


def no_text_warning(what: str, seen: list[str]) -> ResultWarning:
    """The ``no_text`` warning of a result in which no reader found text; ``seen`` says what each reader saw.

    >>> no_text_warning("DOCX file", ["PaddleOCR's converter read 1 unit with no text"])["message"]
    "No text was found in this DOCX file: PaddleOCR's converter read 1 unit with no text."
    """
    reason = "; ".join(seen) or "no reader found text"
    return {"code": NO_TEXT, "requested": f"the text of the {what}", "ran": "no text found", "reason": reason[:1000],
            "message": f"No text was found in this {what}: {reason[:300]}."}


class OcrResult(TypedDict):
    job_id: str
    model: str
    engine: EngineInfo
    page_count: int
    text: str
    pages: list[Page]
    warnings: list[ResultWarning]
    timings: dict[str, float]
    #: The file's type, told from its bytes, where it was read from its own content: docx, pptx, xlsx, html.
    document_type: NotRequired[str]
    pages_failed: NotRequired[list[PageFailure]]


def page_text(page: Page) -> str:
    """A page's text in reading order: its blocks when the engine found layout, else its lines."""
    blocks = [b.get("text", "") for b in page.get("blocks", []) if b.get("text")]
    if blocks:
        return "\n".join(blocks)
    return "\n".join(line["text"] for line in page["lines"])


def without_empty_lines(pages: list[Page]) -> list[Page]:
    """``pages`` without the lines an engine read nothing in (text empty or only spaces; a detector's box over a
    picture comes back so, with score 0): no format has an element for them, so result.json has none either.

    >>> without_empty_lines([{"page": 1, "width": 9, "height": 9, "scale": 1.0,
    ...                       "lines": [{"text": " ", "polygon": [], "score": 0.0}]}])[0]["lines"]
    []
    """
    for page in pages:
        if "lines" in page:
            page["lines"] = [line for line in page["lines"] if str(line.get("text") or "").strip()]
    return pages


def with_words(pages: list[Page]) -> list[Page]:
    """``pages`` with ``words`` on every line: a line that came without any gets them estimated (``core.words``)."""
    for page in pages:
        for line in page.get("lines", []):
            if not isinstance(line.get("words"), list):
                line["words"] = estimated_words(dict(line))
    return pages


def build_result(
    job_id: str,
    model: str,
    engine: EngineInfo,
    pages: list[Page],
    timings: dict[str, float] | None = None,
    warnings: list[ResultWarning] | None = None,
    pages_failed: list[PageFailure] | None = None,
) -> OcrResult:
    """The result document; with ``pages_failed``, it names them and carries one ``pages_failed`` warning."""
    pages = without_empty_lines(pages)
    kept = [w for w in warnings or [] if w.get("code") != PAGES_FAILED]
    failed = sorted(pages_failed or [], key=lambda f: f["page"])
    result: OcrResult = {
        "job_id": job_id,
        "model": model,
        "engine": engine,
        "page_count": len(pages),
        "text": PAGE_SEPARATOR.join(page_text(p) for p in pages),
        "pages": with_words(pages),
        "warnings": kept + ([pages_failed_warning(failed, read=len(pages))] if failed else []),
        "timings": {k: round(float(v), 4) for k, v in (timings or {}).items()},
    }
    if failed:
        result["pages_failed"] = failed
    return result


def validate_result(doc: Any, *, job_id: str | None = None) -> OcrResult:
    """Check the shape of a result document; raise ``JobError(invalid_result)`` saying what is wrong."""

    def bad(reason: str) -> JobError:
        return JobError(ErrorCode.INVALID_RESULT, f"The engine returned an invalid result: {reason}.")

    if not isinstance(doc, dict):
        raise bad("expected a JSON object")
    for key, kind in (("job_id", str), ("model", str), ("engine", dict), ("page_count", int), ("text", str), ("pages", list)):
        if not isinstance(doc.get(key), kind):
            raise bad(f"'{key}' is missing or not a {kind.__name__}")
    if job_id is not None and doc["job_id"] != job_id:
        raise bad(f"it is for job {doc['job_id']!r}, not {job_id!r}")
    engine = doc["engine"]
    if not isinstance(engine.get("name"), str) or not isinstance(engine.get("models"), list):
        raise bad("'engine' needs 'name' and 'models'")
    if doc["page_count"] != len(doc["pages"]):
        raise bad(f"page_count {doc['page_count']} but {len(doc['pages'])} pages")
    for index, page in enumerate(doc["pages"], start=1):
        if not isinstance(page, dict) or not isinstance(page.get("page"), int) or page["page"] < 1:
            raise bad(f"page #{index} has no 1-based 'page' number")
        if not isinstance(page.get("lines"), list):
            raise bad(f"page {page['page']} has no 'lines' list")
        for line in page["lines"]:
            if not isinstance(line, dict) or not isinstance(line.get("text"), str):
                raise bad(f"page {page['page']} has a line without 'text'")
            polygon = line.get("polygon")
            if polygon is None and "polygon" not in line:
                continue  # a line of a page without geometry (an Office or HTML file read natively)
            if not isinstance(polygon, list) or len(polygon) != 4 or not all(isinstance(p, list) and len(p) == 2 for p in polygon):
                raise bad(f"page {page['page']} has a line whose polygon is not 4 [x, y] points")
    warnings = doc.setdefault("warnings", [])
    if not isinstance(warnings, list):
        raise bad("'warnings' is not a list")
    for warning in warnings:
        if not isinstance(warning, dict) or not all(isinstance(warning.get(key), str) for key in ResultWarning.__annotations__):
            raise bad(f"a warning needs string fields {', '.join(ResultWarning.__annotations__)}")
    failed = doc.get("pages_failed", [])
    if not isinstance(failed, list) or not all(
        isinstance(f, dict) and isinstance(f.get("page"), int) and isinstance(f.get("code"), str) for f in failed
    ):
        raise bad("'pages_failed' is not a list of {page, code, message}")
    doc.setdefault("timings", {})
    return doc  # type: ignore[return-value]
