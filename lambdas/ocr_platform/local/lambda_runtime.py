"""The local stack's Lambda service: the real handler modules behind Lambda's Invoke API on 127.0.0.1.

moto does not execute Lambda code without Docker. ``LambdaRuntime`` holds one
:class:`~ocr_platform.local.execution_environment.LocalFunction` per function spec (its execution
environments, up to the spec's ``max_concurrency`` invocations at once), serves the Invoke API
(:mod:`ocr_platform.local.invoke_api`) for code that calls ``boto3.client("lambda").invoke`` behind
``AWS_ENDPOINT_URL_LAMBDA``, and runs asynchronous (``Event``) invocations from a queue per function with
Lambda's retry policy and its on-failure destination record, sent to a function or (``SendMessage``) to
an SQS queue on moto, as Lambda's on-failure destinations are. Event sources in the same process call
``invoke`` / ``invoke_async`` directly.

Both paths keep Lambda's payload quotas (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html):
a request over 6 MB (synchronous) or 1 MB (``Event``) raises
:class:`~ocr_platform.local.invoke_api.RequestTooLargeError` before anything runs, and a synchronous response
over 6 MB is not returned: the invocation ends in the function error ``Function.ResponseSizeTooLarge``.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ocr_platform.local.events import lambda_destination_record
from ocr_platform.local.execution_environment import INIT_TIMEOUT_SECONDS, LocalFunction
from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.function_specs import FunctionSpec
from ocr_platform.local.invoke_api import (
    INVOCATION_TYPES,
    LATEST,
    SYNC_PAYLOAD_LIMIT_BYTES,
    FunctionNotFoundError,
    InvokeApiHandler,
    RequestTooLargeError,
    check_payload_size,
)

__all__ = ["FunctionNotFoundError", "InvocationRecord", "InvocationResult", "LambdaRuntime", "RequestTooLargeError"]

logger = logging.getLogger(__name__)

ACCOUNT = "123456789012"
HISTORY_SIZE = 10_000
LAMBDAS_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class InvocationResult:
    """The outcome of one invocation: the handler's return value, or Lambda's error object."""

    request_id: str
    status_code: int
    payload: Any = None
    error: dict[str, Any] | None = None
    body: bytes = field(default=b"", repr=False)

    @property
    def function_error(self) -> str | None:
        return "Unhandled" if self.error is not None else None


@dataclass(frozen=True)
class InvocationRecord:
    """What one invocation received and how it ended (``error_type`` None: it returned); ``log_stream`` names
    the execution environment that ran it (each has its own, as on Lambda)."""

    function: str
    request_id: str
    event: Any
    error_type: str | None
    log_stream: str | None = None


@dataclass
class _AsyncEvent:
    """An ``Event`` invocation; retries keep its request id, as Lambda's do."""

    function: str
    payload: Any
    request_id: str
    attempts: int = 0


class LambdaRuntime:
    """The Lambda service for a set of functions: Invoke over HTTP and in process, sync and async."""

    def __init__(
        self,
        functions: list[FunctionSpec],
        *,
        base_environment: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        retry_delays_seconds: tuple[float, ...] = (60.0, 120.0),
        prewarm: bool = True,
        faults: FaultInjector | None = None,
        init_timeout_seconds: float = INIT_TIMEOUT_SECONDS,
        sqs: Any = None,
    ) -> None:
        """Serves ``functions`` on ``host:port`` (0: any free port) once started.

        Args:
            base_environment: variables every function gets, under its own ``environment``.
            retry_delays_seconds: waits before the async retries (Lambda's: about 1 and 2 minutes).
            prewarm: start every function's execution environments (their init phases) at ``start``, as
                many as its ``max_concurrency``: a deployed function that has served traffic has them warm.
            faults: failures to inject (none by default).
            init_timeout_seconds: the init phase's own limit (Lambda's 10 s for on-demand functions).
            sqs: the SQS client (on moto) that reaches the specs' ``on_failure_queue`` destinations; a record
                for such a queue is dropped with an error logged when there is none.
        """
        self.region = (base_environment or {}).get("AWS_DEFAULT_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        self.faults = faults or FaultInjector()
        self.functions = {
            spec.name: LocalFunction(spec, self._environment(spec, base_environment or {}), self.function_arn(spec.name),
                                 self.faults, init_timeout_seconds)
            for spec in functions
        }
        self.retry_delays_seconds = retry_delays_seconds or (0.0,)
        self.prewarm = prewarm
        self._sqs = sqs
        self._address = (host, port)
        self._server: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._state = threading.Condition()
        self._busy = 0
        self._sequence = itertools.count()
        self._stopping = False
        self._stats = {name: {"invocations": 0, "errors": 0} for name in self.functions}
        self._history: deque[InvocationRecord] = deque(maxlen=HISTORY_SIZE)
        #: Each function's async queue: (due, sequence, event), a heap ordered by when an event is due.
        self._scheduled: dict[str, list[tuple[float, int, _AsyncEvent]]] = {name: [] for name in self.functions}

    def function_arn(self, name: str) -> str:
        return f"arn:aws:lambda:{self.region}:{ACCOUNT}:function:{name}"

    def _environment(self, spec: FunctionSpec, base: dict[str, str]) -> dict[str, str]:
        env = {**os.environ, **base, **spec.environment}
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or self.region
        env.update({
            "AWS_REGION": region,
            "AWS_DEFAULT_REGION": env.get("AWS_DEFAULT_REGION", region),
            "_HANDLER": spec.handler,
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_VERSION": LATEST,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",  # each environment adds its log stream
            "PYTHONPATH": os.pathsep.join(p for p in (str(LAMBDAS_DIR), env.get("PYTHONPATH", "")) if p),
            # No X-Ray daemon here: the handlers' tracer is a no-op (Powertools turns it off outside Lambda anyway).
            "POWERTOOLS_TRACE_DISABLED": "true",
        })
        return env

    # -- life cycle --------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the Lambda runtime is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        self._server = ThreadingHTTPServer(self._address, InvokeApiHandler)
        self._server.daemon_threads = True
        self._server.runtime = self  # type: ignore[attr-defined]
        self._spawn(self._server.serve_forever, "lambda-http")
        for name, function in self.functions.items():
            # Lambda runs a function's asynchronous events as far as its concurrency allows: one consumer of
            # the function's async queue per execution environment it may have.
            for slot in range(function.spec.max_concurrency):
                self._spawn(self._process_async, f"lambda-{name}-async-{slot}", function)
            if self.prewarm:
                function.prewarm()
        return self.url

    def _spawn(self, target: Any, name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """Stops serving, drops queued async events and ends every execution environment's worker process."""
        with self._state:
            self._stopping = True
            self._state.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for function in self.functions.values():
            function.close()
        grace_ends = time.monotonic() + 2.0
        for function in self.functions.values():
            function.end_environments(grace_ends)
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def __enter__(self) -> LambdaRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- invoking ----------------------------------------------------------------------------------
    def resolve(self, function_name: str, qualifier: str | None = None) -> tuple[LocalFunction, str]:
        """The function a name, ``NAME:qualifier``, partial or full ARN refers to, and the ARN invoked."""
        parts = function_name.split(":")
        if parts[0] == "arn" and len(parts) >= 7:
            name, qualifiers = parts[6], parts[7:]
        elif len(parts) >= 3 and parts[1] == "function":
            name, qualifiers = parts[2], parts[3:]
        else:
            name, qualifiers = parts[0], parts[1:]
        qualifier = qualifier or (qualifiers[0] if qualifiers else None)
        invoked_arn = self.function_arn(name) + (f":{qualifier}" if qualifier else "")
        if name not in self.functions or qualifier not in (None, LATEST) or len(qualifiers) > 1:
            raise FunctionNotFoundError(f"Function not found: {invoked_arn}")
        return self.functions[name], invoked_arn

    def invoke(
        self, name: str, payload: Any, *, invocation_type: str = "RequestResponse", qualifier: str | None = None,
        payload_size: int | None = None,
    ) -> InvocationResult:
        """Invokes a function like Lambda's Invoke API; ``payload`` is the decoded JSON event, ``payload_size`` its
        size in bytes as sent (``None``: the size of its JSON). Raises ``RequestTooLargeError`` over Lambda's quota."""
        if invocation_type not in INVOCATION_TYPES:
            raise ValueError(f"InvocationType must be one of {INVOCATION_TYPES}, not {invocation_type!r}")
        function, invoked_arn = self.resolve(name, qualifier)
        size = _json_size(payload) if payload_size is None else payload_size
        if invocation_type == "Event":
            return InvocationResult(self.invoke_async(name, payload, qualifier=qualifier, payload_size=size), 202)
        check_payload_size(size, invocation_type)
        if invocation_type == "DryRun":
            return InvocationResult(str(uuid.uuid4()), 204)
        with self._state:
            self._busy += 1
        try:
            return self._execute(function, payload, str(uuid.uuid4()), invoked_arn, synchronous=True)
        finally:
            self._done()

    def invoke_async(self, name: str, payload: Any, *, qualifier: str | None = None, payload_size: int | None = None) -> str:
        """Queues an ``Event`` invocation; returns its request id. Raises ``RequestTooLargeError`` over 1 MB."""
        function, _ = self.resolve(name, qualifier)
        check_payload_size(_json_size(payload) if payload_size is None else payload_size, "Event")
        request_id = str(uuid.uuid4())
        self._schedule(_AsyncEvent(function.spec.name, payload, request_id), 0.0)
        return request_id

    def _execute(self, function: LocalFunction, payload: Any, request_id: str, invoked_arn: str, *,
                 synchronous: bool = False) -> InvocationResult:
        body, error, log_stream = function.execute(payload, request_id, invoked_arn)
        if synchronous and error is None and body is not None and len(body.encode()) > SYNC_PAYLOAD_LIMIT_BYTES:
            # Lambda's 6 MB response quota: the caller gets an error instead of the handler's value.
            body, error = None, {
                "errorType": "Function.ResponseSizeTooLarge",
                "errorMessage": f"Response payload size exceeded maximum allowed payload size ({SYNC_PAYLOAD_LIMIT_BYTES} bytes).",
            }
        with self._state:
            stats = self._stats[function.spec.name]
            stats["invocations"] += 1
            stats["errors"] += error is not None
            error_type = error.get("errorType") if error is not None else None
            self._history.append(InvocationRecord(function.spec.name, request_id, payload, error_type, log_stream))
        if error is not None:
            return InvocationResult(request_id, 200, error=error, body=json.dumps(error).encode())
        return InvocationResult(request_id, 200, payload=json.loads(body or "null"), body=(body or "null").encode())

    # -- asynchronous invocations ------------------------------------------------------------------
    def _schedule(self, event: _AsyncEvent, delay_seconds: float) -> None:
        with self._state:
            if self._stopping:
                return
            self._busy += 1
            heapq.heappush(self._scheduled[event.function], (time.monotonic() + delay_seconds, next(self._sequence), event))
            self._state.notify_all()

    def _done(self) -> None:
        with self._state:
            self._busy -= 1
            self._state.notify_all()

    def _process_async(self, function: LocalFunction) -> None:
        """One consumer of the function's async queue (FIFO, each retry waiting out its delay); the function has
        ``max_concurrency`` of them, so that many events run at once, each in an environment of its own."""
        while True:
            scheduled = self._scheduled[function.spec.name]
            with self._state:
                while not self._stopping and not (scheduled and scheduled[0][0] <= time.monotonic()):
                    self._state.wait(scheduled[0][0] - time.monotonic() if scheduled else None)
                if self._stopping:
                    return
                _, _, event = heapq.heappop(scheduled)
            try:
                self._run_async(function, event)
            except Exception:
                logger.exception("Async invocation %s of %s could not run", event.request_id, event.function)
            finally:
                self._done()

    def _run_async(self, function: LocalFunction, event: _AsyncEvent) -> None:
        result = self._execute(function, event.payload, event.request_id, function.arn)
        event.attempts += 1
        if result.error is None:
            if self.faults.take(function.spec.name, "duplicate", json.dumps(event.payload)) is not None:
                # At-least-once: the same event (same request id) is delivered again after it was handled.
                self._schedule(_AsyncEvent(event.function, event.payload, event.request_id), 0.0)
            return
        spec = function.spec
        logger.warning("Async invocation %s of %s failed (attempt %d of %d): %s: %s", event.request_id, spec.name,
                       event.attempts, spec.retry_attempts + 1, result.error.get("errorType"), result.error.get("errorMessage"))
        if event.attempts <= spec.retry_attempts:
            delays = self.retry_delays_seconds
            self._schedule(event, delays[min(event.attempts - 1, len(delays) - 1)])
        elif spec.on_failure is not None:
            if spec.on_failure not in self.functions:
                logger.error("On-failure destination %s of %s does not exist", spec.on_failure, spec.name)
                return
            self._schedule(_AsyncEvent(spec.on_failure, self._failure_record(function, event, result.error), str(uuid.uuid4())), 0.0)
        elif spec.on_failure_queue is not None:
            self._send_to_queue(spec.on_failure_queue, self._failure_record(function, event, result.error), spec.name)

    def _send_to_queue(self, queue: str, record: dict[str, Any], function: str) -> None:
        """Lambda's SQS on-failure destination: the record, as JSON, is the message body."""
        if self._sqs is None:
            logger.error("On-failure queue %s of %s is unreachable: the runtime has no SQS client", queue, function)
            return
        url = self._sqs.get_queue_url(QueueName=queue)["QueueUrl"]
        self._sqs.send_message(QueueUrl=url, MessageBody=json.dumps(record))
        logger.warning("Parked the failed event %s of %s on %s", record["requestContext"]["requestId"], function, queue)

    def _failure_record(self, function: LocalFunction, event: _AsyncEvent, error: dict[str, Any]) -> dict[str, Any]:
        """The invocation record Lambda sends to an on-failure destination."""
        return lambda_destination_record(
            request_id=event.request_id, function_arn=f"{function.arn}:{LATEST}", request_payload=event.payload,
            response_payload=error, approximate_invoke_count=event.attempts,
        )

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Blocks until no invocation runs and no async event (or retry) is queued; False on timeout."""
        with self._state:
            return self._state.wait_for(lambda: self._busy == 0, timeout)

    def wait_initialized(self, timeout: float | None = None) -> dict[str, float | None]:
        """Waits for the init phase of every started execution environment to end (at most ``timeout`` s).

        Returns each function's init duration in seconds, the longest of its environments'; ``None`` where
        no environment is running, or one's init timed out, failed to start or had not ended in time. A
        campaign calls this before its clock starts, as a deployment is finished before traffic arrives.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        durations: dict[str, float | None] = {}
        for name, function in self.functions.items():
            environments = function.environments()
            ended = [environment.wait_init(deadline) for environment in environments]
            inits = [environment.init_seconds for environment in environments]
            durations[name] = max(i for i in inits if i is not None) if environments and all(ended) else None
        return durations

    def invocations(self, function: str | None = None) -> list[InvocationRecord]:
        """The last ``HISTORY_SIZE`` invocations (every attempt), oldest first; of one function if named."""
        with self._state:
            return [r for r in self._history if function is None or r.function == function]

    def stats(self) -> dict[str, dict[str, int]]:
        """Invocations (every attempt) and function errors per function."""
        with self._state:
            return {name: dict(counts) for name, counts in self._stats.items()}


def _json_size(payload: Any) -> int:
    """The size in bytes of ``payload`` as the JSON an SDK would send."""
    return len(json.dumps(payload).encode())
