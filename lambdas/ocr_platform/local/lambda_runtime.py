"""Lambda's Invoke API on 127.0.0.1 running the real handler modules: the local stack's Lambda service.

moto does not execute Lambda code without Docker. ``LambdaRuntime`` serves
``POST /2015-03-31/functions/{FunctionName}/invocations`` the way the Lambda service answers botocore
(``RequestResponse``, ``Event``, ``DryRun``, ``X-Amz-Function-Error``, ``ResourceNotFoundException``), so
code that calls ``boto3.client("lambda").invoke`` behind ``AWS_ENDPOINT_URL_LAMBDA`` runs unchanged.
Event sources in the same process call ``invoke`` / ``invoke_async`` directly.

A :class:`~ocr_platform.local.faults.FaultInjector` can crash an execution environment mid-invocation or
start a handler late (past its timeout, too), the way an out-of-memory kill or a slow start fails on AWS.

Each function runs in one long-lived worker process (``function_worker``) that keeps module state between
invocations and serves one invocation at a time. A timeout or crash ends that worker, as Lambda ends an
execution environment; the next invocation starts a fresh one. Asynchronous invocations follow Lambda's
retry policy and send its on-failure destination record.

A worker's start is Lambda's init phase (the runtime starts, the handler module is imported, engines
built at import are built), timed apart from the invocations, with Lambda's rules for an on-demand
function: the init phase has its own limit (``INIT_TIMEOUT_SECONDS``, 10 s) and does not count against
the function's timeout. An init that outlives it is ended, and Lambda tries it again as part of the first
invocation: that retried init and the handler together must then fit in the function's timeout (the
"suppressed init" of Lambda's logs). So a slow import costs a cold start, never a job's timeout, unless
it takes longer than 10 s. An execution environment has its vCPUs to itself, this machine's processes
share theirs: the init clock leaves out the time the worker waited for a CPU that other processes held
(the run-queue wait in Linux's ``/proc/<pid>/schedstat``; elsewhere the clock is wall time).
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ocr_platform.local.events import lambda_destination_record
from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.function_specs import FunctionSpec

logger = logging.getLogger(__name__)

ACCOUNT = "123456789012"
LATEST = "$LATEST"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")
#: Lambda's limit on the init phase of an on-demand function (provisioned concurrency and SnapStart differ).
INIT_TIMEOUT_SECONDS = 10.0
HISTORY_SIZE = 10_000
LAMBDAS_DIR = Path(__file__).resolve().parents[2]


class FunctionNotFoundError(LookupError):
    """No function of that name (or an unknown qualifier); Lambda's ``ResourceNotFoundException``."""


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
    """What one invocation received and how it ended (``error_type`` None: it returned)."""

    function: str
    request_id: str
    event: Any
    error_type: str | None


@dataclass
class _AsyncEvent:
    """An ``Event`` invocation; retries keep its request id, as Lambda's do."""

    function: str
    payload: Any
    request_id: str
    attempts: int = 0


def cpu_wait_seconds(pid: int) -> float:
    """Seconds the process's main thread was ready to run but waited for a CPU (0 where Linux does not say)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class _Worker:
    """One execution environment: a ``function_worker`` process, its init phase and the lines it answered.

    ``init_limit_seconds`` is the init phase's own limit (a watchdog ends the process when it is reached);
    ``None`` for an init retried inside an invocation, which the invocation's timeout bounds instead.
    """

    def __init__(self, spec: FunctionSpec, environment: dict[str, str], *, init_limit_seconds: float | None) -> None:
        self.name = spec.name
        self.spawned = time.monotonic()
        self.init_limit_seconds = init_limit_seconds
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ocr_platform.local.function_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, text=True, encoding="utf-8",
            start_new_session=True,
        )
        self.answers: queue.Queue[str | None] = queue.Queue()
        self._phase = threading.Condition()
        self.init_seconds: float | None = None
        self.init_timed_out = False
        self.exited = False
        threading.Thread(target=self._read, name=f"lambda-{spec.name}-reader", daemon=True).start()
        if init_limit_seconds is not None:
            threading.Thread(target=self._enforce_init_limit, name=f"lambda-{spec.name}-init", daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if self.init_seconds is None:  # the runtime's first line: the init phase is over
                self._init_done(json.loads(line))
                continue
            self.answers.put(line)
        self.answers.put(None)
        with self._phase:
            self.exited = True
            self._phase.notify_all()

    def _init_done(self, message: dict[str, Any]) -> None:
        with self._phase:
            self.init_seconds = time.monotonic() - self.spawned
            self._phase.notify_all()
        status = f"error ({message['init_error']})" if message.get("init_error") else "success"
        logger.info("INIT_REPORT %s Init Duration: %.2f ms (%.2f ms more waiting for a CPU) Status: %s", self.name,
                    self.init_clock() * 1000, cpu_wait_seconds(self.process.pid) * 1000, status)

    def wait_init(self, deadline: float | None = None) -> bool:
        """Waits for the init phase to end (until ``deadline``, monotonic); False if the process ended first or time ran out."""
        with self._phase:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._phase.wait_for(lambda: self.init_seconds is not None or self.exited, timeout)
            return self.init_seconds is not None

    def init_clock(self) -> float:
        """Seconds of init so far, less the time the worker waited for a CPU held by other processes."""
        return time.monotonic() - self.spawned - cpu_wait_seconds(self.process.pid)

    def _enforce_init_limit(self) -> None:
        assert self.init_limit_seconds is not None
        while (left := self.init_limit_seconds - self.init_clock()) > 0:
            if self.wait_init(time.monotonic() + min(left, 0.25)) or self.exited:
                return
        with self._phase:
            if self.init_seconds is not None or self.exited:
                return
            self.init_timed_out = True
        logger.warning("INIT_REPORT %s Init Duration: %.2f ms Status: timeout (the init phase's limit is %g s; "
                       "Lambda retries the init as part of the next invocation, within its timeout)",
                       self.name, self.init_clock() * 1000, self.init_limit_seconds)
        self.kill()

    @property
    def ended(self) -> bool:
        """The environment is gone, or going: its process exited or was ended at its init limit."""
        return self.init_timed_out or self.exited or self.process.poll() is not None

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def exit_description(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        return f"signal: {(signal.strsignal(-code) or str(-code)).lower()}" if code < 0 else f"exit status {code}"


class _Function:
    """A function's spec, its current worker, and the lock that serializes its invocations."""

    def __init__(self, spec: FunctionSpec, environment: dict[str, str], arn: str, faults: FaultInjector,
                 init_timeout_seconds: float = INIT_TIMEOUT_SECONDS) -> None:
        self.spec, self.environment, self.arn, self.faults = spec, environment, arn, faults
        self.init_timeout_seconds = init_timeout_seconds
        self.lock = threading.Lock()
        self.spawn_guard = threading.Lock()
        self.worker: _Worker | None = None
        self.stopped = False
        self.scheduled: list[tuple[float, int, _AsyncEvent]] = []

    def ensure_worker(self) -> _Worker:
        """The current worker, or a new execution environment if there is none (or it has ended)."""
        with self.spawn_guard:
            if self.stopped:
                raise RuntimeError("the Lambda runtime is stopped")
            if self.worker is None or self.worker.ended:
                # After an init timeout, Lambda runs the init again inside the invocation, on its clock.
                retried_init = self.worker is not None and self.worker.init_timed_out
                limit = None if retried_init else self.init_timeout_seconds
                self.worker = _Worker(self.spec, self.environment, init_limit_seconds=limit)
            return self.worker

    def execute(self, event: Any, request_id: str, invoked_arn: str) -> tuple[str | None, dict[str, Any] | None]:
        """Runs one invocation; returns the handler's JSON text or Lambda's error object."""
        timeout = float(self.spec.timeout_seconds)
        with self.lock:
            worker = self.ensure_worker()
            # The init phase under its own limit (its watchdog ends it) is not the invocation's time.
            if worker.init_limit_seconds is not None and not worker.wait_init():
                if not worker.init_timed_out:
                    return None, self._exited(worker, request_id)
                worker = self.ensure_worker()
            deadline = time.monotonic() + timeout
            wall_deadline = time.time() + timeout
            try:
                if not worker.wait_init(deadline):  # an init retried inside this invocation
                    if worker.exited:
                        return None, self._exited(worker, request_id)
                    raise queue.Empty
                subject = json.dumps(event)
                if (delay := self.faults.take(self.spec.name, "delay", subject)) is not None:
                    remaining = max(0.0, deadline - time.monotonic())
                    time.sleep(min(delay.seconds, remaining))
                    if delay.seconds >= remaining:  # the handler never started
                        raise queue.Empty
                request = {"request_id": request_id, "event": event, "invoked_function_arn": invoked_arn,
                           "deadline_ms": int(wall_deadline * 1000)}
                try:
                    assert worker.process.stdin is not None
                    worker.process.stdin.write(json.dumps(request) + "\n")
                    worker.process.stdin.flush()
                except (OSError, ValueError):  # the worker is gone, or stop() closed its input
                    return None, self._exited(worker, request_id)
                crash = self.faults.take(self.spec.name, "crash", subject)
                killer = threading.Timer(crash.seconds, worker.kill) if crash is not None else None
                if killer is not None:
                    killer.start()
                try:
                    while True:
                        line = worker.answers.get(timeout=max(0.0, deadline - time.monotonic()))
                        if line is None:
                            return None, self._exited(worker, request_id)
                        answer = json.loads(line)
                        if answer.get("request_id") == request_id:
                            return answer.get("payload"), answer.get("error")
                finally:
                    if killer is not None:
                        killer.cancel()
            except queue.Empty:
                worker.kill()
                return None, self._timed_out(request_id, timeout)

    @staticmethod
    def _timed_out(request_id: str, timeout: float) -> dict[str, Any]:
        message = f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds"
        return {"errorType": "Sandbox.Timedout", "errorMessage": message}

    def _exited(self, worker: _Worker, request_id: str) -> dict[str, Any]:
        description = worker.exit_description()
        message = f"RequestId: {request_id} Error: Runtime exited with error: {description}"
        return {"errorType": "Runtime.ExitError", "errorMessage": message}


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
    ) -> None:
        """Serves ``functions`` on ``host:port`` (0: any free port) once started.

        Args:
            base_environment: variables every function gets, under its own ``environment``.
            retry_delays_seconds: waits before the async retries (Lambda's: about 1 and 2 minutes).
            prewarm: start every function's execution environment (its init phase) at ``start``.
            faults: failures to inject (none by default).
            init_timeout_seconds: the init phase's own limit (Lambda's 10 s for on-demand functions).
        """
        self.region = (base_environment or {}).get("AWS_DEFAULT_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        self.faults = faults or FaultInjector()
        self.functions = {
            spec.name: _Function(spec, self._environment(spec, base_environment or {}), self.function_arn(spec.name),
                                 self.faults, init_timeout_seconds)
            for spec in functions
        }
        self.retry_delays_seconds = retry_delays_seconds or (0.0,)
        self.prewarm = prewarm
        self._address = (host, port)
        self._server: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._state = threading.Condition()
        self._busy = 0
        self._sequence = itertools.count()
        self._stopping = False
        self._stats = {name: {"invocations": 0, "errors": 0} for name in self.functions}
        self._history: deque[InvocationRecord] = deque(maxlen=HISTORY_SIZE)

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
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": f"{time.strftime('%Y/%m/%d')}/[{LATEST}]{uuid.uuid4().hex}",
            "PYTHONPATH": os.pathsep.join(p for p in (str(LAMBDAS_DIR), env.get("PYTHONPATH", "")) if p),
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
        self._server = ThreadingHTTPServer(self._address, _InvokeHandler)
        self._server.daemon_threads = True
        self._server.runtime = self  # type: ignore[attr-defined]
        self._spawn(self._server.serve_forever, "lambda-http")
        for name, function in self.functions.items():
            self._spawn(self._process_async, f"lambda-{name}-async", function)
            if self.prewarm:
                function.ensure_worker()
        return self.url

    def _spawn(self, target: Any, name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """Stops serving, drops queued async events and ends every worker process."""
        with self._state:
            self._stopping = True
            self._state.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for function in self.functions.values():
            with function.spawn_guard:
                function.stopped = True
                if function.worker is not None and function.worker.process.stdin is not None:
                    function.worker.process.stdin.close()  # a worker exits on end of input
        grace_ends = time.monotonic() + 2.0
        for function in self.functions.values():
            if function.worker is not None:
                try:
                    function.worker.process.wait(timeout=max(0.0, grace_ends - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
                function.worker.kill()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def __enter__(self) -> LambdaRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- invoking ----------------------------------------------------------------------------------
    def resolve(self, function_name: str, qualifier: str | None = None) -> tuple[_Function, str]:
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

    def invoke(self, name: str, payload: Any, *, invocation_type: str = "RequestResponse", qualifier: str | None = None) -> InvocationResult:
        """Invokes a function like Lambda's Invoke API; ``payload`` is the decoded JSON event."""
        if invocation_type not in INVOCATION_TYPES:
            raise ValueError(f"InvocationType must be one of {INVOCATION_TYPES}, not {invocation_type!r}")
        function, invoked_arn = self.resolve(name, qualifier)
        if invocation_type == "Event":
            return InvocationResult(self.invoke_async(name, payload, qualifier=qualifier), 202)
        if invocation_type == "DryRun":
            return InvocationResult(str(uuid.uuid4()), 204)
        with self._state:
            self._busy += 1
        try:
            return self._execute(function, payload, str(uuid.uuid4()), invoked_arn)
        finally:
            self._done()

    def invoke_async(self, name: str, payload: Any, *, qualifier: str | None = None) -> str:
        """Queues an ``Event`` invocation; returns its request id."""
        function, _ = self.resolve(name, qualifier)
        request_id = str(uuid.uuid4())
        self._schedule(_AsyncEvent(function.spec.name, payload, request_id), 0.0)
        return request_id

    def _execute(self, function: _Function, payload: Any, request_id: str, invoked_arn: str) -> InvocationResult:
        body, error = function.execute(payload, request_id, invoked_arn)
        with self._state:
            stats = self._stats[function.spec.name]
            stats["invocations"] += 1
            stats["errors"] += error is not None
            self._history.append(InvocationRecord(function.spec.name, request_id, payload, (error or {}).get("errorType") if error else None))
        if error is not None:
            return InvocationResult(request_id, 200, error=error, body=json.dumps(error).encode())
        return InvocationResult(request_id, 200, payload=json.loads(body or "null"), body=(body or "null").encode())

    # -- asynchronous invocations ------------------------------------------------------------------
    def _schedule(self, event: _AsyncEvent, delay_seconds: float) -> None:
        with self._state:
            if self._stopping:
                return
            self._busy += 1
            heapq.heappush(self.functions[event.function].scheduled, (time.monotonic() + delay_seconds, next(self._sequence), event))
            self._state.notify_all()

    def _done(self) -> None:
        with self._state:
            self._busy -= 1
            self._state.notify_all()

    def _process_async(self, function: _Function) -> None:
        """The function's async queue: FIFO, with each retry waiting out its delay."""
        while True:
            with self._state:
                while not self._stopping and not (function.scheduled and function.scheduled[0][0] <= time.monotonic()):
                    self._state.wait(function.scheduled[0][0] - time.monotonic() if function.scheduled else None)
                if self._stopping:
                    return
                _, _, event = heapq.heappop(function.scheduled)
            try:
                self._run_async(function, event)
            except Exception:
                logger.exception("Async invocation %s of %s could not run", event.request_id, event.function)
            finally:
                self._done()

    def _run_async(self, function: _Function, event: _AsyncEvent) -> None:
        result = self._execute(function, event.payload, event.request_id, function.arn)
        event.attempts += 1
        if result.error is None:
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

    def _failure_record(self, function: _Function, event: _AsyncEvent, error: dict[str, Any]) -> dict[str, Any]:
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

        Returns each function's init duration in seconds; ``None`` where no environment is running, its
        init timed out or failed to start, or it had not ended in time. A campaign calls this before its
        clock starts, as a deployment is finished before traffic arrives.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        durations: dict[str, float | None] = {}
        for name, function in self.functions.items():
            worker = function.worker
            durations[name] = worker.init_seconds if worker is not None and worker.wait_init(deadline) else None
        return durations

    def invocations(self, function: str | None = None) -> list[InvocationRecord]:
        """The last ``HISTORY_SIZE`` invocations (every attempt), oldest first; of one function if named."""
        with self._state:
            return [r for r in self._history if function is None or r.function == function]

    def stats(self) -> dict[str, dict[str, int]]:
        """Invocations (every attempt) and function errors per function."""
        with self._state:
            return {name: dict(counts) for name, counts in self._stats.items()}


class _InvokeHandler(BaseHTTPRequestHandler):
    """``POST /2015-03-31/functions/{FunctionName}/invocations`` as the Lambda service answers it."""

    protocol_version = "HTTP/1.1"
    server_version = "LocalLambda"

    def do_POST(self) -> None:  # noqa: N802
        runtime: LambdaRuntime = self.server.runtime  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urlsplit(self.path)
        segments = url.path.split("/")
        if len(segments) != 5 or segments[1:3] != ["2015-03-31", "functions"] or segments[4] != "invocations":
            return self._error(404, "UnknownOperationException", "Unknown operation")
        invocation_type = self.headers.get("X-Amz-Invocation-Type") or "RequestResponse"
        if invocation_type not in INVOCATION_TYPES:
            return self._error(400, "ValidationException", f"1 validation error detected: Value '{invocation_type}' at "
                               f"'invocationType' failed to satisfy constraint: Member must satisfy enum value set: {list(INVOCATION_TYPES)}")
        qualifier = parse_qs(url.query).get("Qualifier", [None])[0]
        try:
            runtime.resolve(unquote(segments[3]), qualifier)
        except FunctionNotFoundError as err:
            return self._error(404, "ResourceNotFoundException", str(err))
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError as err:
            return self._error(400, "InvalidRequestContentException", f"Could not parse request body into json: {err}")
        result = runtime.invoke(unquote(segments[3]), payload, invocation_type=invocation_type, qualifier=qualifier)
        headers = {"x-amzn-RequestId": result.request_id}
        if invocation_type == "RequestResponse":
            headers["X-Amz-Executed-Version"] = LATEST
            if result.function_error:
                headers["X-Amz-Function-Error"] = result.function_error
        self._send(result.status_code, result.body, headers)

    def _error(self, status: int, error_type: str, message: str) -> None:
        body = json.dumps({"Type": "User", "message": message}).encode()
        self._send(status, body, {"x-amzn-ErrorType": error_type, "x-amzn-RequestId": str(uuid.uuid4())})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        logger.debug("%s " + format, self.address_string(), *args)
