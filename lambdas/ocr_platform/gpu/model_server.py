"""The SageMaker hosting contract for the PaddleOCR-VL endpoint container.

``serve`` (the container's entry point) runs ``python -m ocr_platform.gpu.model_server``: an HTTP server on
port 8080 with

- ``GET /ping``: 200 once the model is loaded, 503 while it loads, 500 if it could not load;
- ``POST /invocations``: the body is the job's document, the bytes SageMaker read from the request's
  ``InputLocation`` (the document object itself), and the ``X-Amzn-SageMaker-Custom-Attributes`` header carries
  the job's parameters (``ocr_platform.gpu.endpoint_payloads.EndpointParameters``: job id, model, language, pages,
  options and, for a chunk request, the chunk). The engine runs and the answer is a ZIP
  (``endpoint_payloads.build_answer``): result.json, the images of the pages read and, when the job asked for it,
  result.pdf. A bad document answers 400 and anything else 500, each with ``{"error": {"code": ..., "message":
  ...}}`` (and the ``chunk`` of a chunk request), so SageMaker posts to the error topic and the completion handler
  records that code.

Why this shape. The container runs with SageMaker's network isolation
(https://docs.aws.amazon.com/sagemaker/latest/dg/mkt-algo-model-internet-free.html): it has no network and no
AWS credentials, so it makes no AWS call at all, and there is no boto3 client here. SageMaker itself reads the
request's input from S3 and writes the answer to the endpoint's ``S3OutputPath``
(https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-create-invoke-update-delete.html). Naming the
document itself as ``InputLocation`` copies nothing, and a split job's chunk requests all reuse it (a 200 MiB
document in 200 chunks is read 200 times, never written again); the parameters are small enough for
``CustomAttributes`` (1,024 characters, forwarded verbatim as that header:
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html), and a job whose
parameters are not fails at the invoker ``invalid_message``. An envelope object (parameters + document) would copy
the document once per request. The answer has to carry files, so it is a ZIP; SageMaker stores it whole under
``async/outputs/`` and the completion function unpacks it to ``results/{job_id}/``.

A job that asks for ``outputs: ["pdf"]`` gets its searchable result.pdf written here, where the document is on disk
(``requested_pdf.write_local_pdf``, as the CPU processor writes it), and put in the answer; the completion function
stores it at ``results/{job_id}/result.pdf`` and records it on the job item. An endpoint that cannot write the PDF
(no pypdf/reportlab in its image) refuses such a job before reading it, and a PDF that fails to be written fails
the request: the job never completes without what it asked for.

Long documents are split here, where documents are opened: a job request whose selected pages number more
than ``OCR_GPU_PAGES_PER_CHUNK`` is answered at once with a split plan (JSON, ``ocr_platform.core.chunks.split_plan``)
instead of a result; the completion function then sends one request per chunk (the same document, the
parameters with a ``chunk``), and each is answered with the partial result of its pages. The completion function
merges those without the document, so no result.pdf is written for a split job: each chunk's partial result of a
job that asked for one carries an ``output_unavailable`` warning (:func:`split_pdf_warning`), which the merge keeps once.

Models come from the image only: :func:`main` drops ``OCR_BUCKET_NAME`` (the S3 model cache,
``ocr_platform.engines.model_cache``) from the server's environment and sets ``OCR_MODEL_HUB=off`` unless it is set, so a
model missing from the image fails ``/ping`` at once instead of trying S3 or the hub from an isolated container.

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
from collections.abc import Callable, MutableMapping
from contextlib import nullcontext
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.chunks import Chunk, plan_chunks, split_plan
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import OUTPUT_UNAVAILABLE, OcrResult, ResultWarning
from ocr_platform.core.settings import ENV
from ocr_platform.document.intake import IntakeLimits, selected_pages
from ocr_platform.engines import Engine, get_engine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.gpu.endpoint_payloads import ANSWER_CONTENT_TYPE, EndpointParameters, build_answer
from ocr_platform.jobs.messages import JobMessage
from ocr_platform.outputs.figures import figures_of
from ocr_platform.outputs.formats import requested_formats
from ocr_platform.outputs.page_images import page_images_of
from ocr_platform.outputs.requested_pdf import wants_pdf, write_local_pdf

logger = logging.getLogger(__name__)

MODEL = "paddleocr-vl"
#: The largest document a request may carry (the upload limit); SageMaker's async payloads go up to 1 GB
#: (https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference.html).
MAX_BODY_BYTES = defaults.MAX_DOCUMENT_BYTES
CUSTOM_ATTRIBUTES_HEADER = "X-Amzn-SageMaker-Custom-Attributes"
# Input problems the caller can fix answer 400; everything else is the endpoint's fault (500).
CLIENT_ERRORS = {
    ErrorCode.INVALID_MESSAGE, ErrorCode.INPUT_NOT_FOUND, ErrorCode.UNSUPPORTED_TYPE, ErrorCode.UNSUPPORTED_LANGUAGE,
    ErrorCode.EMPTY_DOCUMENT, ErrorCode.CORRUPT_DOCUMENT, ErrorCode.ENCRYPTED_PDF, ErrorCode.DOCUMENT_TOO_LARGE,
    ErrorCode.TOO_MANY_PAGES, ErrorCode.PAGE_TOO_LARGE, ErrorCode.INVALID_PAGES,
}
#: What the searchable PDF writer (``ocr_platform.outputs.searchable_pdf``) imports.
PDF_MODULES = ("pypdf", "reportlab")
#: Room the answer keeps beside its figure crops: result.json's ``image`` fields and the ZIP's headers and directory.
FIGURE_ROOM_MARGIN = 1024 * 1024


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


@dataclass(frozen=True)
class EndpointResponse:
    """One ``/invocations`` answer: its status, content type and body."""

    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        """The body of a JSON answer (a split plan or an error)."""
        return json.loads(self.body)


class EndpointApp:
    """Model state and request handling, independent of the HTTP plumbing. It makes no AWS call.

    Args:
        engine_factory: builds the engine (default: the registry's ``paddleocr-vl`` engine).
        serialize_predictions: run one prediction at a time (an in-process model is not thread-safe).
        pages_per_chunk: a job of more selected pages than this is answered with a split plan; ``None``
            reads every job whole.
        limits: the document limits a split plan and the page images are checked against (the engine checks its own).
    """

    def __init__(
        self, engine_factory: Callable[[], Engine] | None = None, *, serialize_predictions: bool = True,
        pages_per_chunk: int | None = None, limits: IntakeLimits | None = None,
    ) -> None:
        self._factory = engine_factory or (lambda: get_engine(MODEL))
        self.pages_per_chunk = pages_per_chunk
        self.limits = limits or IntakeLimits()
        self.engine: Engine | None = None
        self.load_error: str | None = None
        self._predict_lock = threading.Lock() if serialize_predictions else None

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

    def invoke(self, document: bytes, attributes: str | None) -> EndpointResponse:
        """Answer one request: ``document`` is the body, ``attributes`` the Custom-Attributes header."""
        chunk: Chunk | None = None
        try:
            message, chunk = EndpointParameters.from_attributes(attributes)
            return self._run(message, chunk, document)
        except JobError as err:
            status = HTTPStatus.BAD_REQUEST if err.code in CLIENT_ERRORS else HTTPStatus.INTERNAL_SERVER_ERROR
            return _json(status, {"error": err.as_dict(), **({"chunk": chunk.to_payload()} if chunk else {})})
        except Exception as err:
            logger.exception("Invocation failed")
            error = {"code": ErrorCode.ENGINE_FAILED, "message": f"{type(err).__name__}: {err}"}
            return _json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": error, **({"chunk": chunk.to_payload()} if chunk else {})})

    def _run(self, message: JobMessage, chunk: Chunk | None, document: bytes) -> EndpointResponse:
        if self.engine is None:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, self.load_error or "The model is still loading.")
        if not document:
            raise JobError(ErrorCode.EMPTY_DOCUMENT, "The request's body (the document) is empty.")
        with tempfile.TemporaryDirectory(prefix=f"vl-{message.job_id}-") as tmp:
            path = Path(tmp) / "document"  # its type is read from its bytes
            path.write_bytes(document)
            if chunk is None and self.pages_per_chunk:
                selected = selected_pages(path, pages=message.pages, limits=self.limits)
                if len(selected) > self.pages_per_chunk:
                    plan = split_plan(message.job_id, plan_chunks(selected, pages_per_chunk=self.pages_per_chunk))
                    # The parameters it was sent, which the completion function sends again with each chunk.
                    return _json(HTTPStatus.OK, {**plan, "parameters": EndpointParameters.of(message).as_dict()})
            pdf = wants_pdf(message)
            if pdf and chunk is None:
                self._check_pdf_writable()  # before the model's time is spent on the job
            with self._predict_lock or nullcontext():
                result, _raw = ocr_document(
                    path, job_id=message.job_id, model=message.model, engine=self.engine,
                    language=message.language, pages=chunk.page_spec if chunk else message.pages, options=message.options,
                )
            images = page_images_of(result, path, self.limits)
            if pdf and chunk is not None:
                result["warnings"].append(split_pdf_warning())
            pdf_bytes = self._write_pdf(message, path, result) if pdf and chunk is None else None
            figures = figures_of(result, path, self.limits, max_bytes=figure_room(result, images, pdf_bytes))
            answer = build_answer(result, chunk=chunk, page_images=images, pdf=pdf_bytes,
                                  figures={figure.name: figure.png for figure in figures}, outputs=requested_formats(message.options))
        return EndpointResponse(HTTPStatus.OK, ANSWER_CONTENT_TYPE, answer)

    def _check_pdf_writable(self) -> None:
        """Refuse a job that asked for result.pdf when this endpoint cannot write one."""
        missing = [name for name in PDF_MODULES if importlib.util.find_spec(name) is None]
        if missing:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, "This endpoint cannot write the searchable result.pdf the job "
                           f"asked for (outputs: [\"pdf\"]): its image lacks {' and '.join(missing)}.")

    def _write_pdf(self, message: JobMessage, path: Path, result: OcrResult) -> bytes | None:
        """The job's result.pdf, for the answer. A failure is the request's ``engine_failed``."""
        try:
            target = write_local_pdf(message, path, result)
            return None if target is None else target.read_bytes()
        except Exception as err:
            logger.exception("Could not write result.pdf of job %s", message.job_id)
            raise JobError(ErrorCode.ENGINE_FAILED,
                           f"The searchable result.pdf could not be written: {type(err).__name__}: {err}") from None


def figure_room(result: OcrResult, images: dict[int, bytes], pdf: bytes | None) -> int:
    """What the answer's figure crops may take so that it stays within the completion function's bound
    (``defaults.MAX_ENDPOINT_ANSWER_BYTES``), with room kept for result.json's ``image`` fields and the ZIP's headers."""
    taken = len(json.dumps(result, ensure_ascii=False).encode()) + sum(map(len, images.values())) + len(pdf or b"")
    return max(0, defaults.MAX_ENDPOINT_ANSWER_BYTES - taken - FIGURE_ROOM_MARGIN)


def _json(status: int, payload: dict[str, Any]) -> EndpointResponse:
    return EndpointResponse(status, "application/json", json.dumps(payload, ensure_ascii=False).encode())


def make_server(app: EndpointApp, host: str = "0.0.0.0", port: int = 8080, max_concurrency: int = 4) -> ThreadingHTTPServer:
    """An HTTP server for ``app``; at most ``max_concurrency`` requests are worked on at once."""
    slots = threading.BoundedSemaphore(max_concurrency)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, response: EndpointResponse) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            self._send(_json(status, payload))

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
                self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": {
                    "code": ErrorCode.DOCUMENT_TOO_LARGE, "message": f"The document is larger than {MAX_BODY_BYTES} bytes."}})
                return
            body = self.rfile.read(length)
            with slots:
                self._send(app.invoke(body, self.headers.get(CUSTOM_ATTRIBUTES_HEADER)))

        def log_message(self, fmt: str, *args: Any) -> None:
            logger.info("%s " + fmt, self.address_string(), *args)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def isolate_model_loading(environ: MutableMapping[str, str]) -> None:
    """Models come from the image only: no S3 model cache (``OCR_BUCKET_NAME``), no hub download unless
    ``OCR_MODEL_HUB`` says otherwise. A network-isolated container can reach neither."""
    if environ.pop(ENV.BUCKET_NAME, None):
        logger.info("%s ignored: the endpoint reads no model from S3 (it runs network-isolated)", ENV.BUCKET_NAME)
    environ.setdefault("OCR_MODEL_HUB", "off")


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    isolate_model_loading(os.environ)
    concurrency = int(os.environ.get(ENV.MAX_CONCURRENT_INVOCATIONS, str(defaults.MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE)))
    app = EndpointApp(
        serialize_predictions=os.environ.get("OCR_VL_BACKEND", "native") == "native",
        pages_per_chunk=int(os.environ.get(ENV.GPU_PAGES_PER_CHUNK) or 0) or None,
        limits=PaddleSettings.from_env().intake,
    )
    threading.Thread(target=app.load, name="model-load", daemon=True).start()
    server = make_server(app, port=int(os.environ.get("SAGEMAKER_BIND_TO_PORT", "8080")), max_concurrency=concurrency)
    logger.info("Serving on %s:%d (max %d concurrent invocations)", *server.server_address, concurrency)
    server.serve_forever()


if __name__ == "__main__":
    main()
