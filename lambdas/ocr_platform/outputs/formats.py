"""The formats a result can be had in, made from result.json alone: hOCR, ALTO XML, Textract-shaped JSON (the files a
job may ask for in ``options.outputs``, stored beside its result.json), Markdown and result.json itself. The
searchable PDF also needs the document, so it is ``outputs.requested_pdf``'s.

A job's requested files are written before its result.json (``write_requested_formats``), so a COMPLETED job
has them; one that cannot be written leaves an ``output_unavailable`` warning instead of failing the job. A
format asked for later is made on request from the stored result.json (the jobs API, ``ocr-platform result
--format``): the document is not read again.

>>> sorted(FORMATS)
['alto', 'hocr', 'json', 'md', 'textract']
>>> requested_formats({"outputs": ["pdf", "hocr", "textract"]})
['hocr', 'textract']
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ocr_platform.core.markup import escape_text
from ocr_platform.core.results import OUTPUT_UNAVAILABLE, OcrResult, ResultWarning
from ocr_platform.core.s3_layout import OUTPUT_FILES, StorageLayout
from ocr_platform.outputs.alto import alto_document
from ocr_platform.outputs.hocr import hocr_document
from ocr_platform.outputs.textract import textract_document

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputFormat:
    """A format a result is written in: its name (``--format``, ``options.outputs``), file name and content type."""

    name: str
    file_name: str
    content_type: str
    render: Callable[[OcrResult], str]


def markdown_document(result: OcrResult) -> str:
    """The result as Markdown: each page's own Markdown (layout routes), else its lines (escaped: a line that reads
    ``<script>`` stays text, ``core.markup``), pages apart by a rule.

    >>> markdown_document({"pages": [{"lines": [{"text": "a"}], "markdown": "# A"}, {"lines": [{"text": "b"}]}]})
    '# A\\n\\n---\\n\\nb\\n'
    """
    pages = [page.get("markdown") or "\n".join(escape_text(line["text"]) for line in page["lines"]) for page in result["pages"]]
    return "\n\n---\n\n".join(pages) + "\n"


FORMATS: dict[str, OutputFormat] = {
    "hocr": OutputFormat("hocr", OUTPUT_FILES["hocr"], "application/xhtml+xml; charset=utf-8", hocr_document),
    "alto": OutputFormat("alto", OUTPUT_FILES["alto"], "application/xml; charset=utf-8", alto_document),
    "textract": OutputFormat("textract", OUTPUT_FILES["textract"], "application/json",
                             lambda result: json.dumps(textract_document(result), ensure_ascii=False)),
    "md": OutputFormat("md", "result.md", "text/markdown; charset=utf-8", markdown_document),
    "json": OutputFormat("json", "result.json", "application/json", lambda result: json.dumps(result, indent=2, ensure_ascii=False)),
}
#: The formats a job may ask for in ``options.outputs`` and gets stored beside result.json (the PDF aside).
STORED_FORMATS = tuple(name for name in OUTPUT_FILES if name in FORMATS)


def requested_formats(options: Mapping[str, Any] | None) -> list[str]:
    """The stored formats a job's options ask for (``outputs``), in the order of ``STORED_FORMATS``."""
    asked = (options or {}).get("outputs") or []
    return [name for name in STORED_FORMATS if isinstance(asked, list) and name in asked]


#: The formats that place each word on the page: they need its geometry, which a file read from its own content
#: (an Office or HTML page, ``document_type``) does not have.
PLACED_FORMATS = frozenset({"hocr", "alto", "textract"})


class FormatUnavailable(ValueError):
    """A format that cannot be made from this result; its message says why and what to ask for instead."""

    code = OUTPUT_UNAVAILABLE


def render(name: str, result: OcrResult) -> bytes:
    """``result`` in format ``name`` (a key of ``FORMATS``), encoded as UTF-8.

    Raises ``FormatUnavailable`` for hOCR, ALTO or Textract JSON of a result whose pages have no geometry.

    >>> render("hocr", {"job_id": "j", "document_type": "docx", "pages": [{"page": 1, "width": 0, "lines": []}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ocr_platform.outputs.formats.FormatUnavailable: hocr places each word on its page, and the pages of a DOCX file ... ask for json or md.
    """
    if name in PLACED_FORMATS and any(not page.get("width") for page in result["pages"]):
        kind = str(result.get("document_type") or "this").upper()
        raise FormatUnavailable(
            f"{name} places each word on its page, and the pages of a {kind} file read from its content have no geometry; ask for json or md."
        )
    return FORMATS[name].render(result).encode("utf-8")


def write_formats(s3: Any, layout: StorageLayout, result: OcrResult, names: list[str]) -> list[str]:
    """Write ``result`` in each of ``names`` beside its result.json; the names written. A format that fails adds an
    ``output_unavailable`` warning to ``result`` (written with it afterwards) instead of failing the job."""
    written = []
    for name in names:
        fmt = FORMATS[name]
        try:
            body = render(name, result)
            s3.put_object(Bucket=layout.bucket, Key=layout.output_key(result["job_id"], name), Body=body, ContentType=fmt.content_type)
        except FormatUnavailable as err:
            result["warnings"].append(_unavailable(fmt, str(err)))
            continue
        except Exception as err:  # a writer's bug must not lose the result itself
            logger.exception("Could not write %s of job %s", fmt.file_name, result["job_id"])
            result["warnings"].append(_unavailable(fmt, f"{type(err).__name__}: {err}"))
            continue
        written.append(name)
    return written


def format_locations(layout: StorageLayout, result: OcrResult, names: list[str]) -> dict[str, str]:
    """The ``s3://`` location of each of ``names`` that :func:`write_formats` wrote for ``result`` (one it could not
    write has an ``output_unavailable`` warning), for the job item's and the completion event's ``formats``.

    >>> format_locations(StorageLayout("b"), {"job_id": "j", "warnings": []}, ["hocr"])
    {'hocr': 's3://b/results/j/result.hocr'}
    """
    missing = {w["requested"] for w in result["warnings"] if w.get("code") == OUTPUT_UNAVAILABLE}
    return {name: f"s3://{layout.bucket}/{layout.output_key(result['job_id'], name)}" for name in names if FORMATS[name].file_name not in missing}


def _unavailable(fmt: OutputFormat, reason: str) -> ResultWarning:
    return {
        "code": OUTPUT_UNAVAILABLE, "requested": fmt.file_name, "ran": "result.json", "reason": reason,
        "message": f"{fmt.file_name} could not be written; result.json has the whole result, and the file can be made from it "
                   f"on request (ocr-platform result --format {fmt.name}).",
    }
