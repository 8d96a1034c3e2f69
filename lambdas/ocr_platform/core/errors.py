"""Job errors: a stable machine code plus a message a frontend can show.

Every FAILED job item carries ``error = {"code": ..., "message": ...}``; the codes below are the
vocabulary (docs/contracts.md, "Error codes", says who sets each). Raising ``JobError`` anywhere in domain
code ends the job FAILED with that code.
"""

from __future__ import annotations

from typing import TypedDict


class ErrorCode:
    """The error codes a FAILED job can carry."""

    INVALID_MESSAGE = "invalid_message"
    INVALID_INBOX_KEY = "invalid_inbox_key"
    UNKNOWN_MODEL = "unknown_model"
    INPUT_NOT_FOUND = "input_not_found"
    INPUT_UNREACHABLE = "input_unreachable"
    INPUT_TOO_LARGE = "input_too_large"
    UNSUPPORTED_TYPE = "unsupported_type"
    UNSUPPORTED_LANGUAGE = "unsupported_language"
    EMPTY_DOCUMENT = "empty_document"
    CORRUPT_DOCUMENT = "corrupt_document"
    ENCRYPTED_PDF = "encrypted_pdf"
    ENCRYPTED_DOCUMENT = "encrypted_document"
    ARCHIVE_TOO_LARGE = "archive_too_large"
    DOCUMENT_TOO_LARGE = "document_too_large"
    TOO_MANY_PAGES = "too_many_pages"
    PAGE_TOO_LARGE = "page_too_large"
    INVALID_PAGES = "invalid_pages"
    INVALID_OPTIONS = "invalid_options"
    ENGINE_UNAVAILABLE = "engine_unavailable"
    MODEL_UNAVAILABLE = "model_unavailable"
    ENGINE_FAILED = "engine_failed"
    PROCESSOR_CRASHED = "processor_crashed"
    TIMED_OUT = "timed_out"
    INFERENCE_FAILED = "inference_failed"
    INVALID_RESULT = "invalid_result"
    CAPACITY_UNAVAILABLE = "capacity_unavailable"
    DEAD_LETTERED = "dead_lettered"
    INTERNAL_ERROR = "internal_error"


#: What each code means to the person who sent the job: the one registry the documentation's error-code page is
#: generated from when the site is built (docs/using-it/error-codes.md), so a new code cannot be left out of it.
#: Links are relative to that page.
CAUSES: dict[str, str] = {
    ErrorCode.INVALID_MESSAGE: "the queue message failed the schema (the message says which field)",
    ErrorCode.INVALID_INBOX_KEY: "a file dropped under `inbox/` is not in a model's folder",
    ErrorCode.UNKNOWN_MODEL: "the model is not in the routing table, or its backend is not deployed in this stage",
    ErrorCode.INPUT_NOT_FOUND: "the `input` object does not exist or cannot be read",
    ErrorCode.INPUT_UNREACHABLE: "an `https` input URL could not be fetched: refused by the URL guard (a private, loopback or "
    "link-local address, a port or scheme that is not allowed), or the server did not answer or answered with an error",
    ErrorCode.INPUT_TOO_LARGE: "an input URL's answer is larger than the byte limit (200 MiB by default); nothing more is downloaded",
    ErrorCode.UNSUPPORTED_TYPE: "not a PDF, an image (PNG, JPEG, TIFF, BMP, WEBP), an Office file (DOCX, PPTX, XLSX, DOC, XLS, PPT), "
    "an OpenDocument file (ODT, ODS, ODP), HTML, an email (EML, MSG), RTF, EPUB, CSV, Markdown or text (an audio file, a ZIP "
    "archive of files, a HEIC photo); the type is read from the bytes, not the name. A file read from its own content sent to "
    "`paddleocr-vl` also gets it, naming the CPU routes that read such files ([Office and HTML files](office-and-html.md), "
    "[Email and other formats](more-formats.md))",
    ErrorCode.UNSUPPORTED_LANGUAGE: "no recognition model for that language code",
    ErrorCode.EMPTY_DOCUMENT: "0 bytes, or a PDF without pages",
    ErrorCode.CORRUPT_DOCUMENT: "a truncated or damaged file; as a page's code in `pages_failed`, a page that cannot be loaded, "
    "rendered or decoded",
    ErrorCode.ENCRYPTED_PDF: "a password-protected PDF",
    ErrorCode.ENCRYPTED_DOCUMENT: "a password-protected Office file (DOCX, PPTX, XLSX): save it without the password and resubmit",
    ErrorCode.ARCHIVE_TOO_LARGE: "an Office file that would unpack to more than 512 MiB (its XML to more than 64 MiB), or one part "
    "of it compressed more than 200 to 1 (a ZIP bomb); refused before anything is unpacked",
    ErrorCode.DOCUMENT_TOO_LARGE: "over the byte limit (200 MiB by default), an HTML file over 10 MiB, or an Office or HTML file that "
    "asks for more work than its budget allows (cells, merged ranges and spans, sheets or slides, paragraphs, a part's unpacked "
    "size, HTML elements and depth, picture pixels): the one-line message names the limit, the figure and the setting that "
    "raises it ([The work budget](office-and-html.md#the-work-budget-a-small-file-never-runs-up-a-large-bill))",
    ErrorCode.TOO_MANY_PAGES: "more selected pages than the limit (2000 by default)",
    ErrorCode.PAGE_TOO_LARGE: "a page that cannot fit the pixel budget even downscaled, a PDF page whose drawing instructions unpack "
    "past `max_page_content_bytes` (about 35 MB; refused before the page is loaded), or a decompression bomb (refused before decoding)",
    ErrorCode.INVALID_PAGES: "a page selection outside the document",
    ErrorCode.INVALID_OPTIONS: "the job's `options` name an option that does not exist (the message names those that do) or give "
    "one a value it does not take",
    ErrorCode.ENGINE_UNAVAILABLE: "the model cannot be loaded in this runtime (engine fallback is off: the default of every deployed stage)",
    ErrorCode.MODEL_UNAVAILABLE: "a model the job needs (the recognition model of its language, or a PP-OCRv6 size's) is not on this "
    "machine (not baked, cached or shipped in a package) and the model hub is off or unreachable; bake it "
    "(`processor_bake_models`) or seed it (`ocr-platform models seed`)",
    ErrorCode.ENGINE_FAILED: "the OCR engine raised an error; as a page's code in `pages_failed`, it raised on that page",
    ErrorCode.PROCESSOR_CRASHED: "the CPU processor died (for example out of memory), reported by the on-failure destination",
    ErrorCode.TIMED_OUT: "the CPU processor hit its 15-minute timeout, reported by the on-failure destination; or the sweeper found "
    "the job QUEUED or PROCESSING past its deadline",
    ErrorCode.INFERENCE_FAILED: "the SageMaker endpoint reported an error without a more specific code",
    ErrorCode.INVALID_RESULT: "the endpoint's output did not match the result contract",
    ErrorCode.CAPACITY_UNAVAILABLE: "the GPU endpoint stayed busy updating through every delivery of the message",
    ErrorCode.DEAD_LETTERED: "the invoker could not handle the job message within 5 receives; the message is archived under `dead-letters/`",
    ErrorCode.INTERNAL_ERROR: "the job could not be enqueued or dispatched after all retries",
}


class JobErrorDict(TypedDict):
    code: str
    message: str


class JobError(Exception):
    """A failure that ends one job with a specific code.

    >>> err = JobError(ErrorCode.UNKNOWN_MODEL, "Unknown model 'x'")
    >>> err.as_dict()
    {'code': 'unknown_model', 'message': "Unknown model 'x'"}
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def as_dict(self) -> JobErrorDict:
        return {"code": self.code, "message": self.message}


class RetryLaterError(Exception):
    """A transient condition (e.g. the endpoint is updating): the message should come back later."""
