"""SageMaker async inference on 127.0.0.1: the local stack's ``sagemaker-runtime`` service.

moto accepts ``InvokeEndpointAsync`` but runs nothing: it ignores the endpoint's output path, calls no model
and sends no SNS notification. ``SageMakerAsyncRuntime`` serves ``POST /endpoints/{EndpointName}/async-invocations``
as SageMaker answers botocore (202, ``{"InferenceId"}``, ``X-Amzn-SageMaker-OutputLocation`` / ``-FailureLocation``;
400 ``ValidationError`` for an unknown endpoint or a bad request), so code behind
``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`` runs unchanged. Behind the API:

- every request is queued; a dispatcher reads the variant's ``DesiredInstanceCount`` from the SageMaker control
  plane (moto) and, while it is 0, leaves requests waiting: the platform's scale-from-zero relies on this;
- at >= 1 it starts the model's ``serve`` process (the real vl-endpoint server) on a free port
  (``SAGEMAKER_BIND_TO_PORT``), waits for ``GET /ping`` 200, then keeps at most ``max_concurrent_invocations``
  requests at ``POST /invocations`` (SageMaker's ``MaxConcurrentInvocationsPerInstance``);
- a 2xx body goes to ``{output_path}/{InferenceId}.out`` (or the request's ``S3OutputPathExtension`` and ``Filename``:
  ``ocr_platform.local.async_outcomes``) plus a success notification; anything else to the failure path's
  ``{InferenceId}-error.out`` plus an error notification with SageMaker's ``failureReason``;
- back at 0 instances, once nothing is in flight, the serve process is stopped (scale-in).

The model container runs as a network-isolated one does on AWS (``ocr_platform.local.model_container``: no AWS
credentials or endpoints in its environment, proxies that lead nowhere). It gets the request's body, read here from
the ``InputLocation``, and its ``CustomAttributes`` as the ``X-Amzn-SageMaker-Custom-Attributes`` header; as
SageMaker does, a ``CustomAttributes`` of more than 1,024 characters, or not visible US-ASCII, is a
``ValidationError``. A request for an endpoint that the control plane reports ``Creating``, ``Failed``,
``OutOfService`` or ``Deleting`` is refused with ``ValidationError``, the error InvokeEndpointAsync documents
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html); the message is
this runtime's own wording.

Differences from AWS: one endpoint, and one instance at most (any desired count >= 1 is one process); a capacity
change takes effect at the next poll (no minutes in ``Updating``); an instance that fails its health check
(``/ping`` 500, early exit, startup timeout) fails the requests queued for it instead of being replaced while
they wait; ``RequestTTLSeconds`` is checked when a request is dequeued; container logs go to this process's
stderr, not CloudWatch; requests are not SigV4-checked.

A :class:`~ocr_platform.local.faults.FaultInjector` (target ``endpoint``, action ``model-error``) makes the
model container answer a request with HTTP 500, as a model that fails on AWS does.
"""

from __future__ import annotations

import http.client
import json
import logging
import sys
import threading
import time
import uuid
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from ocr_platform.local.async_outcomes import InvalidOutputNameError, outcome_locations
from ocr_platform.local.events import iso_millis, sagemaker_async_notification
from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.model_container import ModelContainer

logger = logging.getLogger(__name__)

ACCOUNT = "123456789012"
DEFAULT_INVOCATION_TIMEOUT, MAX_INVOCATION_TIMEOUT = 900, 3600  # SageMaker's async defaults and limits
DEFAULT_REQUEST_TTL, MAX_INLINE_BODY, MAX_CUSTOM_ATTRIBUTES = 21600, 128_000, 1024
#: Statuses in which an endpoint takes requests (its configuration keeps serving while it updates).
SERVING_STATUSES = frozenset({"InService", "Updating", "SystemUpdating", "RollingBack", "UpdateRollbackFailed"})


class ValidationError(ValueError):
    """A request SageMaker refuses with HTTP 400 ``ValidationError``."""


@dataclass
class AsyncRequest:
    """One accepted InvokeEndpointAsync request."""

    inference_id: str
    input_location: str | None
    body: bytes | None  # the inline ``Body`` alternative to InputLocation
    content_type: str
    accept: str | None
    custom_attributes: str | None
    output_location: str
    failure_location: str
    timeout_seconds: int
    expires_at: float
    received_time: str


def _split_s3(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc or not parts.path.lstrip("/"):
        raise ValidationError(f"{uri!r} is not an S3 URI (s3://bucket/key).")
    return parts.netloc, parts.path.lstrip("/")


def _fault_subject(request: AsyncRequest) -> str:
    """The text a fault is matched against: the InferenceId, the parameters (``CustomAttributes``, as JSON with the
    usual separators: ``"pages": "4-6"`` names a chunk) and an inline body, so a fault can hit one chunk request."""
    try:
        parameters = json.dumps(json.loads(request.custom_attributes or ""))
    except ValueError:
        parameters = request.custom_attributes or ""
    return f"{request.inference_id} {parameters} {(request.body or b'').decode(errors='replace')}"


class SageMakerAsyncRuntime:
    """InvokeEndpointAsync for one endpoint variant, running its model as a local ``serve`` process.

    AWS clients: pass ``s3`` / ``sns`` / ``sagemaker`` (control plane) clients, or ``endpoint_url`` (e.g. moto's
    server) for all three; by default boto3's own resolution applies (``AWS_ENDPOINT_URL*``).
    ``serve_environment`` is merged over ``os.environ`` for the serve process, which then gets the environment of a
    network-isolated container (``ocr_platform.local.model_container.isolated_environment``).
    """

    def __init__(
        self, *, endpoint_name: str, output_path: str, failure_path: str, success_topic_arn: str | None,
        error_topic_arn: str | None, variant_name: str = "AllTraffic", max_concurrent_invocations: int = 4,
        serve_command: list[str] | None = None, serve_environment: dict[str, str] | None = None,
        endpoint_url: str | None = None, s3: Any = None, sns: Any = None, sagemaker: Any = None,
        region: str = "us-east-1", poll_seconds: float = 0.5, startup_timeout_seconds: float = 300.0,
        host: str = "127.0.0.1", port: int = 0, faults: FaultInjector | None = None,
    ) -> None:
        import boto3

        def client(name: str) -> Any:
            return boto3.client(name, region_name=region, endpoint_url=endpoint_url)

        self.endpoint_name, self.variant_name, self.region = endpoint_name, variant_name, region
        self.output_path, self.failure_path = output_path.rstrip("/"), failure_path.rstrip("/")
        self.success_topic_arn, self.error_topic_arn = success_topic_arn, error_topic_arn
        self.max_concurrent_invocations = max_concurrent_invocations
        self.serve_command = serve_command or [sys.executable, "-m", "ocr_platform.gpu.model_server"]
        self.serve_environment = dict(serve_environment or {})
        self.s3, self.sns, self.sagemaker = s3 or client("s3"), sns or client("sns"), sagemaker or client("sagemaker")
        self.poll_seconds, self.startup_timeout_seconds = poll_seconds, startup_timeout_seconds
        self.host, self.port = host, port
        self.faults = faults or FaultInjector()
        self.accepted = self.completed = self.failed = 0
        self._accepted_ids: Counter[str] = Counter()
        self._queue: deque[AsyncRequest] = deque()
        self._in_flight = 0
        self._cond = threading.Condition()
        self._wake, self._stopping = threading.Event(), threading.Event()
        self.container = ModelContainer(self.serve_command, self.serve_environment, host=host,
                                        max_concurrent_invocations=max_concurrent_invocations)
        self._ready = self._start_failed = False
        self._server: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._pool = ThreadPoolExecutor(max_concurrent_invocations, thread_name_prefix="sagemaker-invocation")

    # -- life cycle --------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> str:
        self._server = ThreadingHTTPServer((self.host, self.port), _handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        for target, name in ((self._server.serve_forever, "sagemaker-http"), (self._dispatch_loop, "sagemaker-dispatcher")):
            self._threads.append(threading.Thread(target=target, name=name, daemon=True))
            self._threads[-1].start()
        logger.info("SageMaker async runtime for %s on %s", self.endpoint_name, self.url)
        return self.url

    def stop(self) -> None:
        """Stop serving, the dispatcher and the serve process; requests still queued are dropped."""
        self._stopping.set()
        self._wake.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for thread in self._threads:
            thread.join(timeout=10)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._stop_serve("runtime stopped")

    def __enter__(self) -> SageMakerAsyncRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- state for the alarm evaluator and tests ---------------------------------------------------
    def backlog(self) -> int:
        """Queued plus in-flight requests (what SageMaker's ``ApproximateBacklogSize`` counts)."""
        with self._cond:
            return len(self._queue) + self._in_flight

    def in_flight(self) -> int:
        """Requests taken from the queue and not finished yet."""
        with self._cond:
            return self._in_flight

    def has_capacity(self) -> bool:
        """Whether a serve process is running and answered ``/ping`` 200."""
        return self._ready and self.serve_pid is not None

    @property
    def serve_pid(self) -> int | None:
        return self.container.pid

    def accepted_requests(self) -> dict[str, int]:
        """How many requests were accepted per InferenceId."""
        with self._cond:
            return dict(self._accepted_ids)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is queued or in flight; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._in_flight, timeout)

    # -- the API -----------------------------------------------------------------------------------
    def accept(self, headers: Any, body: bytes) -> AsyncRequest:
        """Validate and queue one request (``headers``: the HTTP headers botocore sent)."""
        def header(name: str) -> str | None:
            return headers.get(f"X-Amzn-SageMaker-{name}")

        def seconds(name: str, default: int, low: int, high: int) -> int:
            raw = header(name)
            try:
                value = default if raw is None else int(raw)
            except ValueError:
                raise ValidationError(f"{name} must be an integer, not {raw!r}.") from None
            if not low <= value <= high:
                raise ValidationError(f"Value {value} at '{name}' failed to satisfy constraint: between {low} and {high}.")
            return value

        attributes = header("Custom-Attributes")
        if attributes is not None and (len(attributes) > MAX_CUSTOM_ATTRIBUTES or not attributes.isascii() or not attributes.isprintable()):
            raise ValidationError(f"Value at 'customAttributes' failed to satisfy constraint: at most {MAX_CUSTOM_ATTRIBUTES} "
                                  "visible US-ASCII characters.")
        location = header("InputLocation")
        if bool(location) == bool(body):
            raise ValidationError("Provide exactly one of InputLocation and Body.")
        if location:
            _split_s3(location)
        if len(body) > MAX_INLINE_BODY:
            raise ValidationError(f"The inline Body exceeds {MAX_INLINE_BODY} bytes; use InputLocation.")
        inference_id = header("Inference-Id") or str(uuid.uuid4())
        if len(inference_id) > 64 or not inference_id.isprintable() or inference_id[0].isspace():
            raise ValidationError(f"Value '{inference_id}' at 'inferenceId' failed to satisfy constraint: printable, 1-64 characters.")
        try:  # named from the InferenceId, or the Filename, as SageMaker documents (local.async_outcomes)
            names = outcome_locations(self.output_path, self.failure_path, inference_id, filename=header("Filename"),
                                      extension=header("S3OutputPathExtension"))
        except InvalidOutputNameError as err:
            raise ValidationError(str(err)) from None
        request = AsyncRequest(
            inference_id=inference_id, input_location=location, body=body or None,
            content_type=header("Content-Type") or "application/octet-stream", accept=header("Accept"),
            custom_attributes=attributes,
            output_location=names.output, failure_location=names.failure,
            timeout_seconds=seconds("InvocationTimeoutSeconds", DEFAULT_INVOCATION_TIMEOUT, 1, MAX_INVOCATION_TIMEOUT),
            expires_at=time.monotonic() + seconds("RequestTTLSeconds", DEFAULT_REQUEST_TTL, 60, DEFAULT_REQUEST_TTL),
            received_time=iso_millis(),
        )
        with self._cond:
            self._queue.append(request)
            self.accepted += 1
            self._accepted_ids[request.inference_id] += 1
        self._wake.set()
        return request

    # -- capacity and dispatch ---------------------------------------------------------------------
    def _dispatch_loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self._dispatch()
            except Exception:  # e.g. moto unreachable for a moment: never end the dispatcher
                logger.exception("SageMaker runtime: dispatch failed; retrying")
            self._wake.wait(self.poll_seconds)

    def endpoint_status(self) -> str:
        """The endpoint's status as the control plane (moto) reports it."""
        return str(self.sagemaker.describe_endpoint(EndpointName=self.endpoint_name)["EndpointStatus"])

    def _desired_instances(self) -> int:
        desc = self.sagemaker.describe_endpoint(EndpointName=self.endpoint_name)
        variant = next(v for v in desc["ProductionVariants"] if v["VariantName"] == self.variant_name)
        return int(variant.get("DesiredInstanceCount", variant.get("CurrentInstanceCount")) or 0)

    def _dispatch(self) -> None:
        desired = self._desired_instances()
        if (code := self.container.exited()) is not None:
            logger.warning("SageMaker runtime: serve process exited with code %s", code)
            self.container.process, self._ready = None, False
        if desired < 1:
            self._start_failed = False  # the next scale-out gets a fresh instance
            if self.container.process is not None and self.in_flight() == 0:
                self._stop_serve("scaled in to 0 instances")
            return
        with self._cond:
            waiting = bool(self._queue)
        if self.container.process is None and (waiting or not self._start_failed):
            self._start_serve()
        if not self.has_capacity():
            return
        with self._cond:
            while self._queue and self._in_flight < self.max_concurrent_invocations:
                request = self._queue.popleft()
                self._in_flight += 1
                expired = time.monotonic() > request.expires_at
                self._pool.submit(self._run, request, "ClientError: The request expired in the queue (RequestTTLSeconds)." if expired else None)

    def _start_serve(self) -> None:
        """Start the serve process and wait until ``/ping`` says 200; fail the queue if it never does."""
        problem = self.container.start(self._stopping, self.startup_timeout_seconds)
        if self._stopping.is_set():
            self._stop_serve("runtime stopped")
            return
        if problem is None:
            self._ready, self._start_failed = True, False
            logger.info("SageMaker runtime: %s is InService (serve pid %s)", self.endpoint_name, self.container.pid)
            return
        self._start_failed = True
        reason = f"InternalServerError: The model container for {self.endpoint_name} failed its health check: {problem}."
        with self._cond:
            failed, self._queue = list(self._queue), deque()
            self._in_flight += len(failed)
        for request in failed:
            self._pool.submit(self._run, request, reason)

    def _stop_serve(self, why: str) -> None:
        """Stop the serve process; ``serve_pid`` turns None once it has exited."""
        self._ready = False
        self.container.stop(why)

    # -- one invocation ----------------------------------------------------------------------------
    def _run(self, request: AsyncRequest, failure: str | None = None) -> None:
        try:
            if failure is not None:
                self._fail(request, failure)
            else:
                self._invoke(request)
        except Exception as err:
            logger.exception("SageMaker runtime: inference %s could not be completed", request.inference_id)
            try:
                self._fail(request, f"InternalServerError: {type(err).__name__}: {err}")
            except Exception:
                logger.exception("SageMaker runtime: no error notification for %s", request.inference_id)
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()
            self._wake.set()

    def _invoke(self, request: AsyncRequest) -> None:
        payload = request.body
        if payload is None:
            bucket, key = _split_s3(request.input_location or "")
            try:
                payload = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            except Exception as err:
                return self._fail(request, f"ClientError: Failed to download the input from {request.input_location}: {err}")
        headers = {"Content-Type": request.content_type, "X-Amzn-SageMaker-Inference-Id": request.inference_id}
        if request.accept:
            headers["Accept"] = request.accept
        if request.custom_attributes:
            headers["X-Amzn-SageMaker-Custom-Attributes"] = request.custom_attributes
        try:
            if self.faults.take("endpoint", "model-error", _fault_subject(request)) is not None:
                status, body, content_type = 500, b"Internal Server Error (injected model-error fault)", cast("str | None", "text/plain")
            else:
                status, body, content_type = self.container.call("POST", "/invocations", payload, headers, timeout=request.timeout_seconds)
        except TimeoutError:
            return self._fail(request, f"ModelError: The model did not answer within InvocationTimeoutSeconds ({request.timeout_seconds} s).")
        except (OSError, http.client.HTTPException) as err:
            return self._fail(request, f"ModelError: The model container closed the connection: {type(err).__name__}: {err}")
        content_type = content_type or request.accept or "application/octet-stream"
        if 200 <= status < 300:
            self._put(request.output_location, body, content_type)
            self._notify(request, "Completed", content_type, output_location=request.output_location)
            with self._cond:
                self.completed += 1
            return None
        self._put(request.failure_location, body, content_type)
        logs = (f"https://{self.region}.console.aws.amazon.com/cloudwatch/home?region={self.region}#logEventViewer:"
                f"group=/aws/sagemaker/Endpoints/{self.endpoint_name} in account {ACCOUNT}")
        reason = (f"ClientError: Received {'client' if status < 500 else 'server'} error ({status}) from primary with message "
                  f"\"{body.decode(errors='replace')[:1024]}\". See {logs} for more information.")
        return self._fail(request, reason, content_type, request.failure_location)

    def _put(self, uri: str, body: bytes, content_type: str) -> None:
        bucket, key = _split_s3(uri)
        self.s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)

    def _fail(self, request: AsyncRequest, reason: str, content_type: str | None = None, failure_location: str | None = None) -> None:
        logger.warning("SageMaker runtime: inference %s failed: %s", request.inference_id, reason)
        with self._cond:
            self.failed += 1
        self._notify(request, "Failed", content_type, failure_location=failure_location, failure_reason=reason)

    def _notify(self, request: AsyncRequest, status: str, content_type: str | None, *, output_location: str | None = None,
                failure_location: str | None = None, failure_reason: str | None = None) -> None:
        """Publish SageMaker's ``InferenceResult`` notification to the success or the error topic."""
        message = sagemaker_async_notification(
            inference_id=request.inference_id, endpoint_name=self.endpoint_name, input_location=request.input_location,
            request_content_type=request.content_type, received_time=request.received_time, region=self.region,
            output_location=output_location if status == "Completed" else None, response_content_type=content_type,
            failure_reason=failure_reason, failure_location=failure_location,
        )
        topic = self.success_topic_arn if status == "Completed" else self.error_topic_arn
        if self._stopping.is_set():
            logger.info("SageMaker runtime stopped: notification for %s dropped", request.inference_id)
        elif topic:
            self.sns.publish(TopicArn=topic, Message=message)


def _handler(runtime: SageMakerAsyncRuntime) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _reply(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), "x-amzn-RequestId": str(uuid.uuid4()), **headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, code: str, message: str) -> None:
            # botocore's rest-json parser takes the code from x-amzn-ErrorType (up to ':'), else from __type.
            self._reply(status, {"__type": code, "message": message}, {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.sagemaker/"})

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = urlsplit(self.path).path.strip("/").split("/")
            if len(parts) != 3 or parts[0] != "endpoints" or parts[2] != "async-invocations":
                return self._error(404, "UnknownOperationException", f"POST {self.path}: only InvokeEndpointAsync is served here.")
            if (name := unquote(parts[1])) != runtime.endpoint_name:
                return self._error(400, "ValidationError", f"Endpoint {name} of account {ACCOUNT} not found.")
            if (status := runtime.endpoint_status()) not in SERVING_STATUSES:
                return self._error(400, "ValidationError", f"Endpoint {name} of account {ACCOUNT} is {status}; "
                                   "it can be invoked only once it is InService.")
            try:
                request = runtime.accept(self.headers, body)
            except ValidationError as err:
                return self._error(400, "ValidationError", str(err))
            return self._reply(202, {"InferenceId": request.inference_id}, {
                "X-Amzn-SageMaker-OutputLocation": request.output_location, "X-Amzn-SageMaker-FailureLocation": request.failure_location,
            })

        def log_message(self, fmt: str, *args: Any) -> None:
            logger.debug("%s " + fmt, self.address_string(), *args)

    return Handler
