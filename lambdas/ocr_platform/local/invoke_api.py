"""Lambda's Invoke API over HTTP: ``POST /2015-03-31/functions/{FunctionName}/invocations``.

The handler answers botocore the way the Lambda service does (``RequestResponse``, ``Event``, ``DryRun``,
``X-Amz-Function-Error``, ``ResourceNotFoundException``, Lambda's validation messages), so code that
calls ``boto3.client("lambda").invoke`` behind ``AWS_ENDPOINT_URL_LAMBDA`` runs unchanged. The work is
the :class:`~ocr_platform.local.lambda_runtime.LambdaRuntime`'s (the server's ``runtime``, seen here as the
:class:`FunctionInvoker` it satisfies); this module only speaks the protocol.

Lambda's payload quotas hold here as on AWS: a request body over 6 MB (``RequestResponse``, ``DryRun``) or
1 MB (``Event``) is refused with ``RequestTooLargeException`` (HTTP 413) and nothing runs
(https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html,
https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). MB is counted as 2**20 bytes.
"""

from __future__ import annotations

import json
import logging
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

logger = logging.getLogger(__name__)

LATEST = "$LATEST"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")
#: Lambda's invocation payload quotas (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html):
#: 6 MB for a synchronous request and for its response, 1 MB for an asynchronous (``Event``) request.
SYNC_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024
ASYNC_PAYLOAD_LIMIT_BYTES = 1024 * 1024


class RequestTooLargeError(ValueError):
    """The request payload is over Lambda's quota for its invocation type: ``RequestTooLargeException`` (413)."""

    error_type = "RequestTooLargeException"
    status = 413


def payload_limit(invocation_type: str) -> int:
    """The largest request payload, in bytes, that Lambda accepts for ``invocation_type``."""
    return ASYNC_PAYLOAD_LIMIT_BYTES if invocation_type == "Event" else SYNC_PAYLOAD_LIMIT_BYTES


def check_payload_size(size: int, invocation_type: str) -> None:
    """Raises :class:`RequestTooLargeError` where a ``size``-byte payload is over the quota for ``invocation_type``."""
    limit = payload_limit(invocation_type)
    if size > limit:
        raise RequestTooLargeError(f"{size} byte payload is too large for the {invocation_type} invocation type (limit {limit} bytes)")


class FunctionNotFoundError(LookupError):
    """No function of that name (or an unknown qualifier); Lambda's ``ResourceNotFoundException``."""


class InvokeOutcome(Protocol):
    """What the handler reads of one invocation's outcome (``lambda_runtime.InvocationResult``)."""

    @property
    def request_id(self) -> str: ...

    @property
    def status_code(self) -> int: ...

    @property
    def body(self) -> bytes: ...

    @property
    def function_error(self) -> str | None: ...


class FunctionInvoker(Protocol):
    """What the handler calls on its server's ``runtime`` (``lambda_runtime.LambdaRuntime``)."""

    def resolve(self, function_name: str, qualifier: str | None = None) -> object:
        """The function ``function_name`` names; raises :class:`FunctionNotFoundError`."""
        ...

    def invoke(
        self, name: str, payload: Any, *, invocation_type: str = "RequestResponse", qualifier: str | None = None,
        payload_size: int | None = None,
    ) -> InvokeOutcome:
        """Invoke the function like Lambda's Invoke API; raises :class:`RequestTooLargeError` over the quota."""
        ...


class InvokeApiHandler(BaseHTTPRequestHandler):
    """``POST /2015-03-31/functions/{FunctionName}/invocations`` as the Lambda service answers it."""

    protocol_version = "HTTP/1.1"
    server_version = "LocalLambda"

    def do_POST(self) -> None:  # noqa: N802
        runtime: FunctionInvoker = self.server.runtime  # type: ignore[attr-defined]
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
            check_payload_size(len(body), invocation_type)
        except RequestTooLargeError as err:
            return self._error(err.status, err.error_type, str(err))
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError as err:
            return self._error(400, "InvalidRequestContentException", f"Could not parse request body into json: {err}")
        result = runtime.invoke(unquote(segments[3]), payload, invocation_type=invocation_type, qualifier=qualifier,
                                payload_size=len(body))
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
