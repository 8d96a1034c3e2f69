"""The SageMaker hosting contract for the PaddleOCR-VL endpoint container.

``serve`` (the container's entry point) runs ``python -m ocr_platform.model_server``: an HTTP server on
port 8080 with

- ``GET /ping``: 200 once the model is loaded, 503 while it loads, 500 if it could not load;
- ``POST /invocations``: the body is the per-job request the invoker wrote (the job message JSON); the
  document is read from S3, the engine runs, and the response is result.json. A bad document answers
  400 and anything else 500, each with ``{"error": {"code": ..., "message": ...}}``, so SageMaker posts
  to the error topic and the completion handler records that code.

A job that asks for ``outputs: ["pdf"]`` gets its searchable ``results/{job_id}/result.pdf`` written here, where
the document is on disk (``job_runner.write_requested_pdf``, as the CPU processor writes it), and the response
carries its location as ``result_pdf`` beside the result's fields; the completion function takes that field off
before it publishes result.json and records it on the job item. An endpoint that cannot write the PDF (no bucket,
no pypdf/reportlab in its image) refuses such a job before reading it, and a PDF that fails to be written fails
the request: the job never completes without what it asked for.

Long documents are split here, where documents are opened: a job request whose selected pages number more
than ``OCR_GPU_PAGES_PER_CHUNK`` is answered at once with a split plan (``ocr_platform.chunks.split_plan``)
instead of a result; the completion function then sends one request per chunk (the job message with a
``chunk`` field), and each is answered with the partial result of its pages. The completion function merges
those without the document, so no result.pdf is written for a split job: each chunk's partial result of a job
that asked for one carries an ``output_unavailable`` warning (:func:`split_pdf_warning`), which the merge keeps once.

Requests are served by a thread pool no larger than ``MaxConcurrentInvocationsPerInstance``
(``OCR_MAX_CONCURRENT_INVOCATIONS``); the in-process VLM runs one page at a time, while a vLLM server
backend (``OCR_VL_BACKEND=vllm-server``) takes requests concurrently.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from contextlib import nullcontext
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ocr_platform import defaults
from ocr_platform.chunks import Chunk, InvalidChunkError, plan_chunks, split_plan
from ocr_platform.engines import Engine, get_engine
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.intake import IntakeLimits
from ocr_platform.job_runner import download_input, ocr_document, selected_pages, wants_pdf, write_requested_pdf
from ocr_platform.messages import InvalidMessageError, JobMessage, parse_job_message
from ocr_platform.page_images import add_page_images
from ocr_platform.results import OUTPUT_UNAVAILABLE, OcrResult, ResultWarning
from ocr_platform.s3_layout import StorageLayout
from ocr_platform.settings import ENV

logger = logging.getLogger(__name__)

MODEL = "paddleocr-vl"
MAX_BODY_BYTES = 1024 * 1024
# Input problems the caller can fix answer 400; everything else is the endpoint's fault (500).
CLIENT_ERRORS = {
    ErrorCode.INVALID_MESSAGE, ErrorCode.INPUT_NOT_FOUND, ErrorCode.UNSUPPORTED_TYPE, ErrorCode.UNSUPPORTED_LANGUAGE,
    ErrorCode.EMPTY_DOCUMENT, ErrorCode.CORRUPT_DOCUMENT, ErrorCode.ENCRYPTED_PDF, ErrorCode.DOCUMENT_TOO_LARGE,
    ErrorCode.TOO_MANY_PAGES, ErrorCode.PAGE_TOO_LARGE, ErrorCode.INVALID_PAGES,
}
#: What the searchable PDF writer (``ocr_platform.searchable_pdf``) imports.
PDF_MODULES = ("pypdf", "reportlab")


def split_pdf_warning() -> ResultWarning:
    """The warning of a job that asked for result.pdf and was split into chunks, on each chunk's result.

    >>> split_pdf_warning()["message"]
    'result.pdf is not written for a PaddleOCR-VL job split into chunks.'
    """
    return {
        "code": OUTPUT_UNAVAILABLE,
        "requested": "result.pdf",
        "ran": "result.json",
        "reason": "The endpoint split the job into chunks and the completion function merges their results without "
                  "the document, so nothing can write the searchable PDF.",
        "message": "result.pdf is not written for a PaddleOCR-VL job split into chunks.",
    }


class EndpointApp:
    """Model state and request handling, independent of the HTTP plumbing.

    Args:
        engine_factory: builds the engine (default: the registry's ``paddleocr-vl`` engine).
        s3: a boto3 S3 client (default honours ``AWS_ENDPOINT_URL*``).
        serialize_predictions: run one prediction at a time (an in-process model is not thread-safe).
        pages_per_chunk: a job of more selected pages than this is answered with a split plan; ``None``
            reads every job whole.
        limits: the document limits a split plan is checked against (the engine checks its own).
        bucket: the platform bucket, where the images of the pages read go (``ocr_platform.page_images``);
            ``None`` writes none.
    """

    def __init__(
        self, engine_factory: Callable[[], Engine] | None = None, *, s3: Any = None, serialize_predictions: bool = True,
        pages_per_chunk: int | None = None, limits: IntakeLimits | None = None, bucket: str | None = None,
    ) -> None:
        self._factory = engine_factory or (lambda: get_engine(MODEL))
        self._s3 = s3
        self.pages_per_chunk = pages_per_chunk
        self.limits = limits or IntakeLimits()
        self.bucket = bucket
        self.engine: Engine | None = None
        self.load_error: str | None = None
        self._predict_lock = threading.Lock() if serialize_predictions else None

    @property
    def s3(self) -> Any:
        if self._s3 is None:
            import boto3

            self._s3 = boto3.client("s3")
        return self._s3

    def load(self) -> None:
        try:
            self.engine = self._factory()
            logger.info("Model loaded: %s", self.engine.info)
        except Exception as err:
            logger.exception("Model failed to load")
            self.load_error = f"{type(err).__name__}: {err}"

    def ping(self) -> tuple[int, dict[str, Any]]:
        if self.engine is not None:
            return HTTPStatus.OK, {"status": "ready", "engine": self.engine.info}
        if self.load_error:
            return HTTPStatus.INTERNAL_SERVER_ERROR, {"status": "failed", "error": self.load_error}
        return HTTPStatus.SERVICE_UNAVAILABLE, {"status": "loading"}

    def invoke(self, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            return HTTPStatus.OK, dict(self._run(body))
        except JobError as err:
            status = HTTPStatus.BAD_REQUEST if err.code in CLIENT_ERRORS else HTTPStatus.INTERNAL_SERVER_ERROR
            return status, {"error": err.as_dict()}
        except Exception as err:
            logger.exception("Invocation failed")
            return HTTPStatus.INTERNAL_SERVER_ERROR, {"error": {"code": ErrorCode.ENGINE_FAILED, "message": f"{type(err).__name__}: {err}"}}

    def _run(self, body: bytes) -> dict[str, Any]:
        if self.engine is None:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, self.load_error or "The model is still loading.")
        try:
            data = json.loads(body)
            message = parse_job_message(data)
            chunk = Chunk.from_payload(data["chunk"]) if isinstance(data.get("chunk"), dict) else None
        except (ValueError, InvalidMessageError, InvalidChunkError) as err:
            raise JobError(ErrorCode.INVALID_MESSAGE, f"The request is invalid: {err}") from None
        with tempfile.TemporaryDirectory(prefix=f"vl-{message.job_id}-") as tmp:
            path = download_input(self.s3, message.input, Path(tmp))
            if chunk is None and self.pages_per_chunk:
                selected = selected_pages(path, pages=message.pages, limits=self.limits)
                if len(selected) > self.pages_per_chunk:
                    return dict(split_plan(message.job_id, plan_chunks(selected, pages_per_chunk=self.pages_per_chunk)))
            pdf = wants_pdf(message)
            if pdf and chunk is None:
                self._check_pdf_writable()  # before the model's time is spent on the job
            with self._predict_lock or nullcontext():
                result, _raw = ocr_document(
                    path, job_id=message.job_id, model=message.model, engine=self.engine,
                    language=message.language, pages=chunk.page_spec if chunk else message.pages, options=message.options,
                )
            if self.bucket:
                add_page_images(self.s3, StorageLayout(self.bucket), result, path, self.limits)
            if pdf and chunk is not None:
                result["warnings"].append(split_pdf_warning())
            result_pdf = self._write_pdf(message, path, result) if pdf and chunk is None else None
        return {**result, "result_pdf": result_pdf} if result_pdf else dict(result)

    def _check_pdf_writable(self) -> None:
        """Refuse a job that asked for result.pdf when this endpoint cannot write one."""
        missing = [name for name in PDF_MODULES if importlib.util.find_spec(name) is None]
        reason = ("it has no bucket to write it to (OCR_BUCKET_NAME is not set)" if not self.bucket
                  else f"its image lacks {' and '.join(missing)}" if missing else None)
        if reason:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE,
                           f"This endpoint cannot write the searchable result.pdf the job asked for (outputs: [\"pdf\"]): {reason}.")

    def _write_pdf(self, message: JobMessage, path: Path, result: OcrResult) -> str | None:
        """Write and upload the job's result.pdf; its URI. A failure is the request's ``engine_failed``."""
        try:
            return write_requested_pdf(self.s3, StorageLayout(self.bucket or ""), message, path, result)
        except Exception as err:
            logger.exception("Could not write result.pdf of job %s", message.job_id)
            raise JobError(ErrorCode.ENGINE_FAILED,
                           f"The searchable result.pdf could not be written: {type(err).__name__}: {err}") from None


def make_server(app: EndpointApp, host: str = "0.0.0.0", port: int = 8080, max_concurrency: int = 4) -> ThreadingHTTPServer:
    """An HTTP server for ``app``; at most ``max_concurrency`` requests are worked on at once."""
    slots = threading.BoundedSemaphore(max_concurrency)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path == "/ping":
                self._reply(*app.ping())
            else:
                self._reply(HTTPStatus.NOT_FOUND, {"error": {"code": "not_found", "message": self.path}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/invocations":
                self._reply(HTTPStatus.NOT_FOUND, {"error": {"code": "not_found", "message": self.path}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": {"code": ErrorCode.INVALID_MESSAGE, "message": "The request body is too large."}})
                return
            body = self.rfile.read(length)
            with slots:
                self._reply(*app.invoke(body))

        def log_message(self, fmt: str, *args: Any) -> None:
            logger.info("%s " + fmt, self.address_string(), *args)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    concurrency = int(os.environ.get(ENV.MAX_CONCURRENT_INVOCATIONS, str(defaults.MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE)))
    app = EndpointApp(
        serialize_predictions=os.environ.get("OCR_VL_BACKEND", "native") == "native",
        pages_per_chunk=int(os.environ.get(ENV.GPU_PAGES_PER_CHUNK) or 0) or None,
        limits=PaddleSettings.from_env().intake,
        bucket=os.environ.get(ENV.BUCKET_NAME) or None,
    )
    threading.Thread(target=app.load, name="model-load", daemon=True).start()
    server = make_server(app, port=int(os.environ.get("SAGEMAKER_BIND_TO_PORT", "8080")), max_concurrency=concurrency)
    logger.info("Serving on %s:%d (max %d concurrent invocations)", *server.server_address, concurrency)
    server.serve_forever()


if __name__ == "__main__":
    main()
