"""The jobs API a browser calls: create a job and get an upload form for it, read one's own jobs and results.

Plain Python over the job store and S3; ``ocr_platform.handlers.api`` maps HTTP routes onto it. Every call
names the signed-in user (``owner``: the token's ``sub``). A job belongs to the user who created it, and
another user's job is answered exactly as a job that does not exist (404), so ids cannot be probed.

The upload starts the job: ``create`` writes the item ``QUEUED`` with its owner and returns a presigned POST
for ``uploads/{job_id}/{file_name}`` only (its size and content type fixed in the signed policy); S3's
"Object Created" event for that key reaches the ingest function (``ocr_platform.inputs.inbox``), which sends the
job's message. A job whose file never arrives stays ``QUEUED`` until the sweeper's deadline for a queued job
(4 days) fails it ``timed_out``.

A job may instead name an ``https://`` URL: ``create`` then writes the item and sends the job's message at once,
and the invoker fetches the document (``ocr_platform.document.url_input``). Either kind may carry a ``callback_url``
(``ocr_platform.outputs.webhook_delivery``) and engine ``options`` (docs/contracts.md, "Engine options": the engine
checks them, as a message's; here only that they are a small JSON object). A ``COMPLETED`` job's result comes
inline in ``result_links`` when it is at most ``inline_result_max_bytes`` (1 MiB), and always by presigned URL,
with its ``s3://`` location.

>>> content_type_of("Scan 1.PDF")
'application/pdf'
>>> content_type_of("song.mp3") is None
True
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.core.s3_layout import S3Uri, StorageLayout
from ocr_platform.core.safe_http import BlockedUrlError, UrlPolicy, check_url
from ocr_platform.document.url_input import OFFICE_AND_HTML_TYPES, input_file_name
from ocr_platform.jobs.messages import InvalidMessageError, JobMessage, parse_job_message
from ocr_platform.jobs.store import JobItem, JobStatus, JobStore, NewJob
from ocr_platform.outputs.formats import FORMATS, STORED_FORMATS, FormatUnavailable, render

#: The API's routes (``METHOD /path``): the stack declares them on the HTTP API, the local stack serves them.
ROUTES = ("POST /jobs", "GET /jobs", "GET /jobs/{job_id}", "GET /jobs/{job_id}/result")
#: The file types intake reads, by extension, and the Content-Type the upload must declare.
UPLOAD_CONTENT_TYPES = {
    ".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
    ".tif": "image/tiff", ".tiff": "image/tiff", ".bmp": "image/bmp", ".webp": "image/webp",
    **OFFICE_AND_HTML_TYPES,
}
#: Job item attributes a user sees; claims, leases and S3 locations of the backends stay internal.
PUBLIC_ATTRIBUTES = (
    "job_id", "status", "model", "language", "pages", "file_name", "created_at", "updated_at", "started_at",
    "finished_at", "page_count", "pages_done", "chunk_count", "warnings", "pages_failed", "error", "input_url", "callback_url",
    "callback_status", "callback_attempts", "document_type",
)


class ApiError(Exception):
    """A request the API refuses: an HTTP status and a ``{code, message}`` body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def as_body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def content_type_of(file_name: str) -> str | None:
    """The Content-Type an upload of ``file_name`` must declare; ``None`` for a type intake does not read."""
    dot = file_name.rfind(".")
    return UPLOAD_CONTENT_TYPES.get(file_name[dot:].lower()) if dot > 0 else None


@dataclass(frozen=True)
class JobsApi:
    """The jobs API over one platform.

    Attributes:
        store / s3 / layout: the platform's job store, S3 client and bucket layout.
        max_upload_bytes: the largest upload the presigned POST admits (intake's limit, 200 MiB).
        upload_expiry_seconds: how long the upload form is valid.
        result_url_seconds: how long a presigned result URL is valid.
        sqs / queue_url: where a job submitted by URL sends its message (no upload starts it).
        url_policy: which ``url`` and ``callback_url`` values the stage accepts.
        inline_result_max_bytes: a result up to this size comes inline in ``result_links``.
    """

    store: JobStore
    s3: Any
    layout: StorageLayout
    max_upload_bytes: int = defaults.MAX_DOCUMENT_BYTES
    upload_expiry_seconds: int = defaults.UPLOAD_URL_SECONDS
    result_url_seconds: int = defaults.RESULT_URL_SECONDS
    sqs: Any = None
    queue_url: str = ""
    url_policy: UrlPolicy = UrlPolicy.PUBLIC_HTTPS
    inline_result_max_bytes: int = defaults.INLINE_RESULT_MAX_BYTES

    def create(
        self, owner: str, *, file_name: str | None = None, url: str | None = None, model: str, language: str = defaults.LANGUAGE,
        pages: str | None = None, callback_url: str | None = None, options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new ``QUEUED`` job of ``owner``: with ``file_name``, the presigned POST that uploads its file (and
        starts it); with ``url``, the job is started at once and the platform fetches the document. ``options``
        go into the job's message as they are (the engine fails a job whose options it does not know
        ``invalid_options``); only a non-object, one over ``MAX_OPTIONS_BYTES`` or one holding NaN is refused here."""
        if model not in MODEL_TABLE:
            raise ApiError(400, ErrorCode.UNKNOWN_MODEL, f"Unknown model {model!r}; use one of {', '.join(MODEL_TABLE)}.")
        if (file_name is None) == (url is None):
            raise ApiError(400, ErrorCode.INVALID_MESSAGE, "Give exactly one of 'filename' (then upload the file) and 'url'.")
        for field_name, value in (("url", url), ("callback_url", callback_url)):
            if value is not None:
                try:
                    check_url(value, self.url_policy)
                except BlockedUrlError as err:
                    raise ApiError(400, ErrorCode.INVALID_MESSAGE, f"'{field_name}' is refused: {err}") from None
        if url is not None:
            return self._create_from_url(
                owner, url=url, model=model, language=language, pages=pages, callback_url=callback_url, options=options,
            )
        assert file_name is not None
        content_type = content_type_of(file_name)
        if content_type is None or "/" in file_name or "\\" in file_name or len(file_name) > 200:
            raise ApiError(400, "invalid_file_name", f"{file_name!r} must be a file name (no path, at most 200 characters) "
                           f"ending in one of {', '.join(sorted(UPLOAD_CONTENT_TYPES))}.")
        job_id = uuid.uuid4().hex
        upload, document = self.layout.upload_uri(job_id, file_name), self.layout.document_uri(job_id, file_name)
        message = _message(job_id, model, str(document), language, pages, callback_url, options)
        # The item keeps the options: the ingest function builds the job's message from it when the upload arrives.
        self.store.create(NewJob(
            job_id, model, message.input, language=message.language, pages=message.pages, options=_plain_json(message.options),
            file_name=file_name, owner=owner, callback_url=message.callback_url,
        ))
        form = self.s3.generate_presigned_post(
            Bucket=upload.bucket, Key=upload.key, Fields={"Content-Type": content_type},
            Conditions=[{"Content-Type": content_type}, ["content-length-range", 1, self.max_upload_bytes]],
            ExpiresIn=self.upload_expiry_seconds,
        )
        return {"job_id": job_id, "status": JobStatus.QUEUED, "upload": {"url": form["url"], "fields": form["fields"]}}

    def _create_from_url(
        self, owner: str, *, url: str, model: str, language: str, pages: str | None, callback_url: str | None,
        options: dict[str, Any] | None,
    ) -> dict[str, Any]:
        if not self.queue_url:
            raise ApiError(501, "url_input_unavailable", "This API cannot start jobs by URL (no job queue is configured).")
        job_id = uuid.uuid4().hex
        message = _message(job_id, model, url, language, pages, callback_url, options)
        self.store.create(NewJob(
            job_id, model, url, language=message.language, pages=message.pages, options=_plain_json(message.options),
            file_name=input_file_name(url), owner=owner, callback_url=message.callback_url,
        ))
        self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=message.to_json())
        return {"job_id": job_id, "status": JobStatus.QUEUED}

    def get(self, owner: str, job_id: str) -> dict[str, Any]:
        """``owner``'s job (its public attributes); 404 for another user's job as for a missing one."""
        return public_view(self._own(owner, job_id))

    def list(self, owner: str, *, limit: int = 20, next_token: str | None = None) -> dict[str, Any]:
        """One page of ``owner``'s jobs, newest first, and the token of the next page (``None`` after the last)."""
        start = _decode_token(next_token, owner) if next_token else None
        jobs, last = self.store.list_by_owner(owner, limit=limit, start_after=start)
        return {"jobs": [public_view(job) for job in jobs], "next": _encode_token(last) if last else None}

    def result_links(self, owner: str, job_id: str, *, output: str | None = None) -> dict[str, Any]:
        """Short-lived presigned URLs of a ``COMPLETED`` job's ``result.json``, of its page images (the pages
        as the engine read it: the result's coordinates are in their pixels), of its figure crops (``figures``: each
        with its ``name``, the ``image`` of its block in result.json), of its searchable ``result.pdf`` (``pdf``, when
        the job asked for one) and of its files in other formats (``formats``: by name, those stored beside
        result.json, ``output`` made from result.json first when it is not); 409 until it is COMPLETED."""
        if output is not None and output not in STORED_FORMATS:
            raise ApiError(400, "unknown_format", f"format must be one of {', '.join(STORED_FORMATS)}, not {output!r}.")
        job = self._own(owner, job_id)
        if job.get("status") != JobStatus.COMPLETED:
            raise ApiError(409, "result_not_ready", f"Job {job_id} is {job.get('status')}; a result exists once it is COMPLETED.")
        result = S3Uri.parse(str(job["result"]))
        formats = self._formats(result, job_id, output)
        pages = []
        prefix = self.layout.page_images_prefix(job_id)
        for listing in self.s3.get_paginator("list_objects_v2").paginate(Bucket=result.bucket, Prefix=prefix):
            for obj in listing.get("Contents", []):
                number = int(obj["Key"].rsplit("/", 1)[-1].split(".")[0])
                pages.append({"page": number, "image": self._link(result.bucket, obj["Key"])})
        figures = []
        prefix = self.layout.figures_prefix(job_id)
        for listing in self.s3.get_paginator("list_objects_v2").paginate(Bucket=result.bucket, Prefix=prefix):
            for obj in listing.get("Contents", []):
                name = "figures/" + obj["Key"].rsplit("/", 1)[-1]
                figures.append({"page": int(name[len("figures/"):].split("-")[0]), "name": name,
                                "image": self._link(result.bucket, obj["Key"])})
        answer: dict[str, Any] = {
            "job_id": job_id, "location": str(result), "result": self._link(result.bucket, result.key), "pages": pages,
            "figures": figures, "formats": formats,
            "expires_in": self.result_url_seconds,
        }
        if job.get("result_pdf"):
            pdf = S3Uri.parse(str(job["result_pdf"]))
            answer["pdf"] = self._link(pdf.bucket, pdf.key)
        stored = self.s3.get_object(Bucket=result.bucket, Key=result.key)
        answer["size"] = size = int(stored["ContentLength"])
        if size <= self.inline_result_max_bytes:
            answer["inline"] = json.loads(stored["Body"].read())
        else:
            stored["Body"].close()  # a larger one is only linked: its bytes are not read
        return answer

    def _formats(self, result: S3Uri, job_id: str, output: str | None) -> dict[str, str]:
        """Links to the job's files in the stored formats, by name; ``output`` is made from result.json and stored
        beside it first when the job has no such file (the document is not read again)."""
        keys = {self.layout.output_key(job_id, name): name for name in STORED_FORMATS}
        folder = self.layout.result_key(job_id).rsplit("/", 1)[0] + "/"
        stored = {keys[obj["Key"]] for listing in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=result.bucket, Prefix=folder, Delimiter="/") for obj in listing.get("Contents", []) if obj["Key"] in keys}
        if output is not None and output not in stored:
            document = json.loads(self.s3.get_object(Bucket=result.bucket, Key=result.key)["Body"].read())
            try:
                body = render(output, document)
            except FormatUnavailable as err:
                raise ApiError(409, err.code, str(err)) from None
            self.s3.put_object(Bucket=result.bucket, Key=self.layout.output_key(job_id, output), Body=body, ContentType=FORMATS[output].content_type)
            stored.add(output)
        return {name: self._link(result.bucket, self.layout.output_key(job_id, name)) for name in STORED_FORMATS if name in stored}

    def _link(self, bucket: str, key: str) -> str:
        return str(self.s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=self.result_url_seconds))

    def _own(self, owner: str, job_id: str) -> JobItem:
        job = self.store.get(job_id) if job_id and len(job_id) <= 64 else None
        if job is None or job.get("owner") != owner:
            raise ApiError(404, "job_not_found", f"No job {job_id!r}.")
        return job


def _message(
    job_id: str, model: str, input_uri: str, language: str, pages: str | None, callback_url: str | None,
    options: dict[str, Any] | None = None,
) -> JobMessage:
    body: dict[str, Any] = {"job_id": job_id, "model": model, "input": input_uri, "language": language}
    if pages is not None:
        body["pages"] = pages
    if callback_url is not None:
        body["callback_url"] = callback_url
    if options is not None:
        body["options"] = options
    try:
        return parse_job_message(body)
    except InvalidMessageError as err:
        raise ApiError(400, ErrorCode.INVALID_MESSAGE, str(err)) from None


def _plain_json(options: dict[str, Any]) -> dict[str, Any]:
    """``options``, refused when they hold NaN or infinities, which no JSON holds (the job store keeps the rest)."""
    try:
        json.dumps(options, allow_nan=False)
        return options
    except ValueError:
        raise ApiError(400, ErrorCode.INVALID_MESSAGE, "'options' must be plain JSON (no NaN or Infinity)") from None


def public_view(job: JobItem) -> dict[str, Any]:
    """The attributes of a job item a user sees."""
    return {name: job[name] for name in PUBLIC_ATTRIBUTES if name in job}  # type: ignore[literal-required]


def _encode_token(key: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(key, sort_keys=True).encode()).decode()


def _decode_token(token: str, owner: str) -> dict[str, Any]:
    """A ``next`` token back into the index key; refused unless it continues ``owner``'s own listing."""
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
    except ValueError:
        key = None
    if not isinstance(key, dict) or key.get("owner") != owner:
        raise ApiError(400, "invalid_token", "The 'next' token is not one this listing returned.")
    return key

