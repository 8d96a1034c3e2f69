"""The SQS job message: the contract between clients and the invoker (docs/contracts.md, "SQS job message").

``parse_job_message`` turns a raw body into a ``JobMessage`` or raises ``InvalidMessageError`` that
carries the job id when one could be read, so the invoker can fail that job with the reason instead of
retrying a message that can never succeed.

>>> msg = parse_job_message('{"job_id": "j1", "model": "pp-ocrv5", "input": "s3://b/documents/j1/a.png"}')
>>> (msg.job_id, msg.language, msg.pages)
('j1', 'en', None)
>>> parse_job_message('{"job_id": "j1", "model": "pp-ocrv5"}')
Traceback (most recent call last):
...
ocr_platform.jobs.messages.InvalidMessageError: 'input' is required: an s3://bucket/key URI of the document, or an https:// URL
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from ocr_platform.core import defaults
from ocr_platform.core.chunks import PAGES_PATTERN
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.core.s3_layout import JOB_ID_MAX_LENGTH, S3Uri, is_key_safe_id, is_valid_job_id
from ocr_platform.core.safe_http import MAX_URL_LENGTH
from ocr_platform.document.url_input import is_url_input
from ocr_platform.jobs.store import NewJob

LANGUAGE_PATTERN = re.compile(r"^[a-z][a-z_]{1,19}$")
MAX_OPTIONS_BYTES = 16_384


class JobMessageBody(TypedDict, total=False):
    """The JSON body on the OCR queue."""

    job_id: str
    model: str
    input: str
    language: str
    pages: str
    options: dict[str, Any]
    callback_url: str


@dataclass(frozen=True)
class JobMessage:
    """A validated job message.

    Attributes:
        job_id: letters, digits, ``-``, ``_``; becomes S3 key segments and the SageMaker InferenceId.
        model: the routing key (validated against the model table by the router, not here).
        input: ``s3://bucket/key`` of the document, or an ``https://`` URL the invoker fetches it from once
            (``ocr_platform.document.url_input``).
        language: PaddleOCR language code, default ``en``.
        pages: optional page selection such as ``"1-3,7"`` (1-based).
        options: optional engine options.
        callback_url: optional ``https://`` URL that gets one signed POST when the job ends
            (``ocr_platform.outputs.webhook_delivery``).
    """

    job_id: str
    model: str
    input: str
    language: str = defaults.LANGUAGE
    pages: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    callback_url: str | None = None

    def to_body(self) -> JobMessageBody:
        body: JobMessageBody = {"job_id": self.job_id, "model": self.model, "input": self.input, "language": self.language}
        if self.pages:
            body["pages"] = self.pages
        if self.options:
            body["options"] = self.options
        if self.callback_url:
            body["callback_url"] = self.callback_url
        return body

    def to_json(self) -> str:
        return json.dumps(self.to_body(), separators=(",", ":"))

    def as_new_job(self, *, file_name: str | None = None) -> NewJob:
        return NewJob(**asdict(self), file_name=file_name)


class InvalidMessageError(ValueError):
    """The message cannot be processed; ``job_id`` is set when the body named a usable one."""

    def __init__(self, message: str, *, job_id: str | None = None, raw: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id
        self.raw = raw or {}

    @property
    def callback_url(self) -> str | None:
        """The message's ``callback_url`` when it is a well-formed URL, so the job's failure still reaches it."""
        url = self.raw.get("callback_url")
        return url if _is_message_url(url) else None


def _is_message_url(value: object) -> bool:
    """Whether ``value`` is a URL a message may carry (``http(s)://``, at most ``MAX_URL_LENGTH`` characters);
    whether the stage calls it is the URL policy's question (``safe_http``)."""
    return isinstance(value, str) and is_url_input(value) and len(value) <= MAX_URL_LENGTH


def parse_job_message(body: str | bytes | Mapping[str, Any]) -> JobMessage:
    """Validate a queue message body and return the typed message."""
    if isinstance(body, (str, bytes)):
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise InvalidMessageError(f"message body is not JSON: {err}") from None
    else:
        data = body
    if not isinstance(data, dict):
        raise InvalidMessageError(f"message body must be a JSON object, got {type(data).__name__}")

    raw_id = data.get("job_id")
    job_id = raw_id if is_key_safe_id(raw_id) else None

    def invalid(reason: str) -> InvalidMessageError:
        return InvalidMessageError(reason, job_id=job_id, raw=data)

    if job_id is None:
        raise invalid(f"'job_id' is required: letters, digits, '-' and '_' only, at most {JOB_ID_MAX_LENGTH} characters")
    if not is_valid_job_id(job_id):
        raise invalid(f"'job_id' has {len(job_id)} characters; at most {JOB_ID_MAX_LENGTH} are allowed (SageMaker's InferenceId limit)")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise invalid(f"'model' is required: one of {', '.join(MODEL_TABLE)}")
    input_uri = data.get("input")
    if not isinstance(input_uri, str):
        raise invalid("'input' is required: an s3://bucket/key URI of the document, or an https:// URL")
    if is_url_input(input_uri):
        if len(input_uri) > MAX_URL_LENGTH:
            raise invalid(f"'input' is a URL of {len(input_uri)} characters; at most {MAX_URL_LENGTH} are allowed")
    else:
        try:
            S3Uri.parse(input_uri)
        except ValueError as err:
            raise invalid(f"'input' is invalid: {err}; give an s3://bucket/key URI or an https:// URL") from None
    callback_url = data.get("callback_url")
    if callback_url is not None and not _is_message_url(callback_url):
        raise invalid(f"'callback_url' must be an https:// URL of at most {MAX_URL_LENGTH} characters, got {callback_url!r}")
    language = data.get("language", defaults.LANGUAGE)
    if not isinstance(language, str) or not LANGUAGE_PATTERN.match(language):
        raise invalid(f"'language' must be a PaddleOCR language code such as 'en', 'ch' or 'korean', got {language!r}")
    pages = data.get("pages")
    if pages is not None and (not isinstance(pages, str) or not PAGES_PATTERN.match(pages)):
        raise invalid(f"'pages' must look like \"1-3,7\" (1-based page numbers and ranges), got {pages!r}")
    if pages is not None and any(int(n) < 1 for n in re.findall(r"\d+", pages)):
        raise invalid(f"'pages' are 1-based; {pages!r} names page 0")
    options = data.get("options", {})
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise invalid("'options' must be a JSON object")
    if len(json.dumps(options)) > MAX_OPTIONS_BYTES:
        raise invalid(f"'options' is larger than {MAX_OPTIONS_BYTES} bytes")
    return JobMessage(
        job_id=job_id, model=model, input=input_uri, language=language, pages=pages, options=options,
        callback_url=callback_url or None,
    )
