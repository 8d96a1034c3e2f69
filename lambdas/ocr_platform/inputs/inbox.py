"""The drop folder: an object written under ``inbox/<model>/`` (or ``inbox/<model>/<language>/``) becomes a
job, with no other call. The same events start the jobs API's jobs, whose file arrives under
``uploads/{job_id}/`` (``ocr_platform.inputs.jobs_api``).

S3 reports each new object (an EventBridge "Object Created" event); :func:`ingest_upload` turns it into a
job the same way a client's ``submit`` does: the document is copied to ``documents/{job_id}/``, the job item
is created ``QUEUED`` and the job message goes on the queue, where the invoker takes over (and fails the job
``unknown_model``, ``unsupported_language`` or a type's code, as for any message).

A dropped file asks for engine features with its user metadata: ``ocr-features`` (``aws s3 cp --metadata
ocr-features=forms``: key-value pairs and check boxes), a comma-separated list that becomes the job's
``options.features`` (the engine fails a job whose features it does not know ``invalid_options``).

The job id is derived from the object, not drawn at random, so S3 delivering the event twice (it is at
least once), or a retry after a crash, gives the same job: ``inbox-`` and 40 hex digits of the SHA-256 of
the bucket, the key and the version id (the ETag on an unversioned bucket).

>>> upload = InboxUpload("my-bucket", "inbox/pp-ocrv5/fr/scan 1.pdf", etag="9b2cf535f27731c974343645a3985328")
>>> parse_inbox_key(upload.key)
('pp-ocrv5', 'fr', 'scan 1.pdf')
>>> upload.job_id
'inbox-29b9a6646d8e03d4d8174d2e48fa3fc50eea0263'
>>> parse_inbox_key("inbox/scan.pdf")
Traceback (most recent call last):
...
ocr_platform.inputs.inbox.InvalidInboxKeyError: 'inbox/scan.pdf' is not inbox/<model>/<file> or inbox/<model>/<language>/<file>
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.s3_layout import INBOX_PREFIX, UPLOADS_PREFIX, S3Uri, StorageLayout, is_valid_job_id
from ocr_platform.jobs.messages import InvalidMessageError, parse_job_message
from ocr_platform.jobs.store import TERMINAL_STATUSES, JobAlreadyExistsError, JobStatus, JobStore, NewJob

logger = logging.getLogger(__name__)

IngestOutcome = Literal["queued", "duplicate", "failed", "ignored"]


def inbox_event_pattern(bucket: str) -> dict[str, Any]:
    """The EventBridge pattern of the ingest rule: ``bucket``'s "Object Created" events under ``inbox/`` (the
    drop folder) and ``uploads/`` (the jobs API's uploads); the stack's rule and the local stack's both use it."""
    return {
        "source": ["aws.s3"],
        "detail-type": ["Object Created"],
        "detail": {"bucket": {"name": [bucket]}, "object": {"key": [{"prefix": INBOX_PREFIX}, {"prefix": UPLOADS_PREFIX}]}},
    }


class InvalidInboxKeyError(ValueError):
    """An inbox key that names no model (or has more folders than a language)."""


@dataclass(frozen=True)
class InboxUpload:
    """One object written under ``inbox/``, as S3's event names it.

    Attributes:
        bucket / key: where it was written.
        etag: its ETag (quotes stripped).
        version_id: its version on a versioned bucket, else ``None`` (or ``"null"``).
    """

    bucket: str
    key: str
    etag: str = ""
    version_id: str | None = None

    @property
    def version(self) -> str | None:
        """The object's own version id; ``None`` on an unversioned bucket, and for ``"null"``, the name S3 gives
        the version of an object written while versioning was off (told apart by its ETag instead)."""
        return self.version_id if self.version_id not in (None, "", "null") else None

    @property
    def job_id(self) -> str:
        """The job this object becomes: the same for every event about this version of it."""
        identity = "\n".join((self.bucket, self.key, self.version or self.etag.strip('"')))
        return "inbox-" + hashlib.sha256(identity.encode()).hexdigest()[:40]


def parse_inbox_key(key: str) -> tuple[str, str | None, str]:
    """``(model, language or None, file name)`` of an inbox key; ``InvalidInboxKeyError`` when it has none."""
    parts = key[len(INBOX_PREFIX):].split("/") if key.startswith(INBOX_PREFIX) else []
    if len(parts) not in (2, 3) or not all(parts):
        raise InvalidInboxKeyError(f"{key!r} is not inbox/<model>/<file> or inbox/<model>/<language>/<file>")
    return parts[0], (parts[1] if len(parts) == 3 else None), parts[-1]


def ingest_upload(
    upload: InboxUpload, *, store: JobStore, s3: Any, sqs: Any, queue_url: str, layout: StorageLayout
) -> IngestOutcome:
    """Make the job of one inbox object: copy the document, create the item, send the job message.

    ``ignored``: a folder marker (a key ending in ``/``). ``duplicate``: the job exists and is past
    ``QUEUED``. A key without a model, or an invalid language, ends the job ``FAILED`` here; every other
    check is the invoker's and the backend's, as for a message a client sends. A job still ``QUEUED`` gets
    its message again: an earlier attempt may have stopped between the item and the message, and the
    invoker hands a job over once however many messages it gets.
    """
    if upload.key.endswith("/"):
        return "ignored"
    if upload.key.startswith(UPLOADS_PREFIX):
        return _start_api_job(upload, store=store, s3=s3, sqs=sqs, queue_url=queue_url)
    job_id = upload.job_id
    try:
        model, language, file_name = parse_inbox_key(upload.key)
    except InvalidInboxKeyError as err:
        return _fail(store, job_id, JobError(ErrorCode.INVALID_INBOX_KEY, f"{err}; move the file under a model's folder."), upload)
    existing = store.get(job_id)
    if existing and (existing.get("status") in TERMINAL_STATUSES or existing.get("status") == JobStatus.PROCESSING):
        logger.info("Inbox object s3://%s/%s is job %s already (%s)", upload.bucket, upload.key, job_id, existing["status"])
        return "duplicate"
    document = layout.document_uri(job_id, file_name)
    body: dict[str, Any] = {"job_id": job_id, "model": model, "input": str(document)}
    if language:
        body["language"] = language
    features = _features(s3, upload)
    if features:
        body["options"] = {"features": features}
    try:
        message = parse_job_message(body)
    except InvalidMessageError as err:
        return _fail(store, job_id, JobError(ErrorCode.INVALID_MESSAGE, f"The inbox key {upload.key!r} is invalid: {err}"), upload, model)
    if not _copy(s3, upload, document):
        return _fail(store, job_id, JobError(
            ErrorCode.INPUT_NOT_FOUND, f"s3://{upload.bucket}/{upload.key} was deleted before it could be read."
        ), upload, model)
    try:
        store.create(message.as_new_job(file_name=file_name))
    except JobAlreadyExistsError:
        pass
    sqs.send_message(QueueUrl=queue_url, MessageBody=message.to_json())
    logger.info("Inbox object s3://%s/%s queued as job %s", upload.bucket, upload.key, job_id)
    return "queued"


def _start_api_job(upload: InboxUpload, *, store: JobStore, s3: Any, sqs: Any, queue_url: str) -> IngestOutcome:
    """The file of a jobs API job arrived at ``uploads/{job_id}/{file}``: copy it to the job's input and send
    its message (built from the item the API wrote). An upload no API job waits for is ignored."""
    job_id = upload.key[len(UPLOADS_PREFIX):].split("/", 1)[0]
    job = store.get(job_id) if is_valid_job_id(job_id) else None
    if job is None or not job.get("owner"):
        logger.warning("Upload s3://%s/%s is for no job of the jobs API; ignored", upload.bucket, upload.key)
        return "ignored"
    if job.get("status") != JobStatus.QUEUED:
        return "duplicate"
    message = parse_job_message({
        name: job[name] for name in ("job_id", "model", "input", "language", "pages", "options") if job.get(name)
    })
    if not _copy(s3, upload, S3Uri.parse(message.input)):
        store.mark_failed(job_id, JobError(ErrorCode.INPUT_NOT_FOUND, f"The upload s3://{upload.bucket}/{upload.key} was deleted before it could be read."))
        return "failed"
    sqs.send_message(QueueUrl=queue_url, MessageBody=message.to_json())
    logger.info("Upload s3://%s/%s started job %s", upload.bucket, upload.key, job_id)
    return "queued"


#: The user metadata (``x-amz-meta-ocr-features``) a dropped file asks for engine features with.
FEATURES_METADATA = "ocr-features"


def _features(s3: Any, upload: InboxUpload) -> list[str]:
    """The features the dropped object's ``ocr-features`` metadata names (none when it has none, or is gone: the
    copy then fails the job ``input_not_found``)."""
    request: dict[str, str] = {"Bucket": upload.bucket, "Key": upload.key}
    if upload.version:
        request["VersionId"] = upload.version
    try:
        metadata = s3.head_object(**request).get("Metadata", {})
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") not in {"NoSuchKey", "404", "NoSuchVersion"}:
            raise
        return []
    return [name.strip() for name in str(metadata.get(FEATURES_METADATA, "")).split(",") if name.strip()]


def _copy(s3: Any, upload: InboxUpload, target: S3Uri) -> bool:
    """Copy the uploaded version to ``target``; ``False`` when it is gone."""
    copy_source: dict[str, str] = {"Bucket": upload.bucket, "Key": upload.key}
    if upload.version:
        copy_source["VersionId"] = upload.version
    try:
        s3.copy_object(Bucket=target.bucket, Key=target.key, CopySource=copy_source)
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") not in {"NoSuchKey", "404", "NoSuchVersion"}:
            raise
        return False
    return True


def _fail(store: JobStore, job_id: str, error: JobError, upload: InboxUpload, model: str | None = None) -> IngestOutcome:
    logger.warning("Inbox object s3://%s/%s failed as job %s: %s", upload.bucket, upload.key, job_id, error)
    job = NewJob(job_id, model=model, input=f"s3://{upload.bucket}/{upload.key}") if model else None
    store.mark_failed(job_id, error, job=job)
    return "failed"
