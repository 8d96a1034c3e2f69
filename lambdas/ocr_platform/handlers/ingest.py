"""Drop-folder ingest Lambda: an object written under ``inbox/<model>/[<language>/]`` becomes a job.

Triggered by an EventBridge rule on the bucket's "Object Created" events under ``inbox/`` (asynchronously:
EventBridge's and Lambda's retries, then the parked-events queue). The event's shape::

    {"detail-type": "Object Created", "source": "aws.s3",
     "detail": {"bucket": {"name": "..."}, "object": {"key": "inbox/pp-ocrv5/scan.pdf", "size": 1024,
                "etag": "...", "version-id": "...", "sequencer": "..."}, "reason": "PutObject", ...}}

``version-id`` is there only on a versioned bucket.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import S3EventBridgeNotificationEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.metrics import metrics
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.handlers._services import services
from ocr_platform.inputs.inbox import InboxUpload, ingest_upload

logger = Logger(service="ocr-ingest")


@metrics.log_metrics
@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
    s3_event = S3EventBridgeNotificationEvent(event)
    obj = s3_event.detail.object
    upload = InboxUpload(s3_event.detail.bucket.name, obj.key, etag=obj.etag, version_id=obj.raw_event.get("version-id"))
    logger.append_keys(job_id=upload.job_id, key=upload.key)
    annotate_job(upload.job_id)
    outcome = ingest_upload(
        upload, store=svc.store, s3=svc.s3, sqs=svc.sqs, queue_url=svc.settings.queue_url, layout=svc.layout
    )
    logger.info("Inbox object ingested", outcome=outcome)
    return {"job_id": upload.job_id, "outcome": outcome}
