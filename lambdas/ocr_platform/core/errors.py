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
