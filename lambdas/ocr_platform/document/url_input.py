"""Documents submitted by URL: a job's input may be an http(s) URL instead of an S3 object.

The document is fetched once, through ``safe_http`` (so the URL cannot reach the platform's own network,
redirects included), streamed to a temporary file (a 200 MB document never sits in memory), and stored in
the platform bucket; from there the job runs exactly as for an upload. The document's type is not checked
here: intake checks the stored bytes as it does an upload's. The remote ``Content-Type`` only names the
file when the URL does not; it is not stored as the object's metadata (the server chose it, not us).

Failures end the job with a ``JobError``:

- ``input_unreachable``: the URL was refused by the policy, the host could not be resolved or reached,
  the exchange timed out, redirected too often, or answered a non-2xx status;
- ``input_too_large``: the body is larger than ``max_bytes``;
- ``empty_document``: the body is empty.

>>> is_url_input("https://example.com/scan.pdf"), is_url_input("s3://bucket/scan.pdf")
(True, False)
"""

from __future__ import annotations

import http
import re
import tempfile
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.safe_http import BlockedUrlError, HttpFailure, UrlPolicy, display_url, request

MAX_FILE_NAME = 200
DEFAULT_FILE_NAME = "document"
_MAX_EXTENSION = 16  # a longer "extension" is part of the name
# Bodies up to this size stay in memory; larger ones spill to a temporary file (Lambda's /tmp).
_SPOOL_BYTES = 8 * 1024 * 1024
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
#: The files read from their own content (``ocr_platform.document.native_files``: Office, OpenDocument, HTML, email,
#: EPUB, text), by extension, with their Content-Type.
OFFICE_AND_HTML_TYPES = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".docm": "application/vnd.ms-word.document.macroEnabled.12",
    ".pptm": "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
    ".xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
    ".html": "text/html",
    ".htm": "text/html",
    ".doc": "application/msword",
    ".xls": "application/vnd.ms-excel",
    ".ppt": "application/vnd.ms-powerpoint",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".rtf": "application/rtf",
    ".epub": "application/epub+zip",
    ".eml": "message/rfc822",
    ".msg": "application/vnd.ms-outlook",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".md": "text/markdown",
    ".txt": "text/plain",
}
_EXTENSIONS = {
    "application/pdf": "pdf",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/jpg": "jpg",
    "image/pjpeg": "jpg",
    "image/tiff": "tiff",
    "image/bmp": "bmp",
    "image/x-bmp": "bmp",
    "image/x-ms-bmp": "bmp",
    "image/webp": "webp",
    **{mime: extension.lstrip(".") for extension, mime in reversed(list(OFFICE_AND_HTML_TYPES.items()))},
    "application/xhtml+xml": "html",
}


def is_url_input(value: str) -> bool:
    """Whether a job's input names a URL to fetch (``http://`` or ``https://``) rather than an S3 object.

    >>> is_url_input("HTTPS://example.com/a.png"), is_url_input("documents/a.png")
    (True, False)
    """
    return value[:8].lower().startswith(("http://", "https://"))


@dataclass(frozen=True)
class FetchedInput:
    """A fetched document, as stored.

    Attributes:
        uri: ``s3://bucket/key`` it was stored at.
        size: its size in bytes.
        content_type: the server's ``Content-Type`` (as sent, parameters included), if any.
        final_url: the URL it came from, after redirects.
    """

    uri: str
    size: int
    content_type: str | None
    final_url: str


def input_file_name(url: str, content_type: str | None = None) -> str:
    """A safe file name for a document fetched from ``url``: its last path segment, percent-decoded, with
    every run of characters other than letters, digits, ``.``, ``-`` and ``_`` made one ``_``, at most
    200 characters (the extension kept). ``document`` when the URL names none; an extension from
    ``content_type`` (PDF, PNG, JPEG, TIFF, BMP, WEBP, Office, HTML) when the name has none.

    >>> input_file_name("https://example.com/files/My%20Scan%20(1).PDF?download=1")
    'My_Scan_1.PDF'
    >>> input_file_name("https://example.com/", "application/pdf; charset=binary")
    'document.pdf'
    >>> input_file_name("https://example.com/get/12345", "image/jpeg")
    '12345.jpg'
    >>> input_file_name("https://example.com/a/..%2F..%2Fetc%2Fpasswd")
    'etc_passwd'
    >>> input_file_name("https://example.com/%E6%96%87%E4%BB%B6.pdf")
    'document.pdf'
    """
    path = urllib.parse.urlsplit(url).path
    segment = urllib.parse.unquote(path.rsplit("/", 1)[-1], errors="replace")
    cleaned = _UNSAFE_RUN.sub("_", segment)
    stem, dot, extension = cleaned.rpartition(".")
    if not dot or not extension.isalnum() or len(extension) > _MAX_EXTENSION:
        stem, extension = cleaned, ""
    stem = stem.strip("._-") or DEFAULT_FILE_NAME
    if not extension:
        mime = (content_type or "").split(";", 1)[0].strip().lower()
        extension = _EXTENSIONS.get(mime, "")
    suffix = f".{extension}" if extension else ""
    return stem[: MAX_FILE_NAME - len(suffix)].rstrip("._-") + suffix


def fetch_input(
    url: str,
    *,
    s3: Any,
    bucket: str,
    key_for: Callable[[str], str],
    max_bytes: int,
    timeout_seconds: float,
    max_redirects: int,
    policy: UrlPolicy,
) -> FetchedInput:
    """GET ``url`` under ``policy`` and store its body at ``s3://bucket/{key_for(file name)}``.

    ``key_for`` turns the file name (``input_file_name`` of the final URL) into the object key, e.g.
    ``lambda name: layout.document_uri(job_id, name).key``. Raises ``JobError`` (see the module's
    docstring); an S3 error is not the input's fault and propagates as it is.
    """
    shown = display_url(url)
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as spool:
        sink = cast(BinaryIO, spool)
        try:
            response = request("GET", url, policy=policy, timeout_seconds=timeout_seconds, max_redirects=max_redirects, max_bytes=max_bytes, sink=sink)
        except BlockedUrlError as err:
            raise JobError(ErrorCode.INPUT_UNREACHABLE, f"the input URL was refused: {err}") from err
        except HttpFailure as err:
            if err.kind == "too_large":
                raise JobError(ErrorCode.INPUT_TOO_LARGE, f"GET {shown}: the document is larger than the {max_bytes / 2**20:g} MiB limit") from err
            raise JobError(ErrorCode.INPUT_UNREACHABLE, err.reason) from err
        if not 200 <= response.status < 300:
            raise JobError(ErrorCode.INPUT_UNREACHABLE, f"GET {display_url(response.url)} answered {_status_text(response.status)}")
        size = sink.tell()
        if size == 0:
            raise JobError(ErrorCode.EMPTY_DOCUMENT, f"GET {display_url(response.url)} answered {_status_text(response.status)} with an empty body")
        content_type = response.headers.get("content-type")
        key = key_for(input_file_name(response.url, content_type))
        sink.seek(0)
        s3.upload_fileobj(sink, bucket, key)
    return FetchedInput(uri=f"s3://{bucket}/{key}", size=size, content_type=content_type, final_url=response.url)


def _status_text(status: int) -> str:
    """``404 Not Found``; just the number for a status ``http`` does not know.

    >>> _status_text(404), _status_text(599)
    ('404 Not Found', '599')
    """
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)
