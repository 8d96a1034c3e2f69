"""CPU processor Lambda (container image): run PP-OCRv5 / PP-OCRv6 / PP-StructureV3 on one job.

Invoked asynchronously by the invoker with the job message as the payload, and by itself with the job
message plus a ``chunk`` field for each chunk of a long document (``ocr_platform.core.chunks``): the run that
opens a document of more than ``OCR_CPU_PAGES_PER_CHUNK`` pages launches one invocation per chunk, as far as
the stage's processor slots allow (an event's ``slot`` field names the slot it holds: ``ocr_platform.jobs.admission``). Models load once per
container (``ocr_platform.engines.get_engine`` caches them) and serve every warm invocation.

Init phase (module import, before the first invocation): the engines named in ``OCR_PRELOAD_MODELS``
are built, ``pp-ocrv6`` in the image (PP-OCRv6 tiny on faster-paddle and the ONNX orientation classifiers,
no PaddleX import), so a new container's first job pays only for its pages. Deferred to the first job that
needs them: PP-OCRv5 (PaddleOCR's imports), recognisers for other languages and the PP-StructureV3 pipeline. An engine that fails at init does not
stop the container: the job that asks for it retries the build and fails ``engine_unavailable``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.chunks import Chunk, InvalidChunkError
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.metrics import metrics
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.cpu.job_runner import FanOut, HeldSlot, LambdaChunkLauncher, process_chunk, process_job
from ocr_platform.engines import get_engine, preload_engines
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.handlers._services import services
from ocr_platform.jobs.messages import InvalidMessageError, parse_job_message

logger = Logger(service="ocr-processor")
preload_engines()  # $OCR_PRELOAD_MODELS; nothing when unset (tests, the local stack)


@metrics.log_metrics
@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
    try:
        message = parse_job_message(event)
        chunk = Chunk.from_payload(event["chunk"]) if isinstance(event, dict) and "chunk" in event else None
    except (InvalidMessageError, InvalidChunkError) as err:
        job_id = getattr(err, "job_id", None) or (event.get("job_id") if isinstance(event, dict) else None)
        if isinstance(job_id, str):
            svc.store.mark_failed(job_id, JobError(ErrorCode.INVALID_MESSAGE, f"The job message is invalid: {err}"))
        logger.error("Invalid processor payload", reason=str(err))
        return {"job_id": job_id, "outcome": "failed"}
    logger.append_keys(job_id=message.job_id, model=message.model, chunk=chunk.label if chunk else None)
    annotate_job(message.job_id, model=message.model)
    # A claim lasts as long as this invocation can; Lambda retries an event with its request id.
    attempt_id, lease_seconds = context.aws_request_id, context.get_remaining_time_in_millis() / 1000
    slots = svc.slots
    token = event.get("slot")
    held = HeldSlot(slots, token) if slots is not None and isinstance(token, str) and token else None
    fan_out = FanOut(svc.settings.cpu_pages_per_chunk, LambdaChunkLauncher(svc.lambda_client, context.function_name), slots)
    if chunk is not None:
        result = process_chunk(
            message, chunk, store=svc.store, s3=svc.s3, layout=svc.layout, engine_for=get_engine,
            attempt_id=attempt_id, lease_seconds=lease_seconds, limits=PaddleSettings.from_env().intake,
            fan_out=fan_out, held=held, max_failed_percent=svc.settings.max_failed_page_percent,
        )
    else:
        result = process_job(
            message, store=svc.store, s3=svc.s3, layout=svc.layout, engine_for=get_engine,
            limits=PaddleSettings.from_env().intake, fan_out=fan_out, attempt_id=attempt_id, lease_seconds=lease_seconds,
            held=held, max_failed_percent=svc.settings.max_failed_page_percent,
        )
    logger.info("Job processed", outcome=result.outcome, result=result.result_uri)
    return {"job_id": message.job_id, "outcome": result.outcome, "result": result.result_uri}
