"""The execution environment of one local Lambda function: imports its handler once, serves invocations.

``LambdaRuntime`` starts it as ``python -m ocr_platform.local.function_worker`` with the function's
environment, including the variables Lambda itself sets (``_HANDLER``, ``AWS_LAMBDA_FUNCTION_NAME``,
``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``, ...), the way Lambda's runtime interface client reads them. Module
state survives between invocations (warm starts); failures are reported in Lambda's error shapes.

Importing the handler module is Lambda's init phase; the runtime times it apart from the invocations.

Protocol, one JSON object per line: requests ``{"request_id", "event", "deadline_ms", "invoked_function_arn"}``
on stdin; answers ``{"ready": true, "init_error": <error type or null>}`` once, when the init phase is
over, then ``{"request_id", "payload": "<JSON text>"}`` or
``{"request_id", "error": {...}}`` on the original stdout. File descriptor 1 is pointed at stderr before
the handler is imported, so handler prints and native libraries cannot corrupt the protocol.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

Handler = Callable[[Any, "LambdaContext"], Any]


@dataclass
class LambdaContext:
    """The context object Lambda's Python runtime passes to a handler (the attributes handlers read)."""

    function_name: str
    function_version: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    log_group_name: str
    log_stream_name: str
    deadline_ms: int
    identity: Any = None
    client_context: Any = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - int(time.time() * 1000))


class InitError(Exception):
    """The handler could not be loaded; carries Lambda's error type for it."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def load_handler(handler_name: str) -> Handler:
    module_name, _, attribute = handler_name.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as err:
        raise InitError("Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {err}") from err
    except Exception as err:
        raise InitError("Runtime.ImportModuleError", f"Unable to import module '{module_name}': {err}") from err
    handler = getattr(module, attribute, None)
    if not callable(handler):
        raise InitError("Runtime.HandlerNotFound", f"Handler '{attribute}' missing on module '{module_name}'")
    return handler


def error_object(err: BaseException, request_id: str) -> dict[str, Any]:
    """Lambda's Python runtime error payload for an exception raised by the handler."""
    return {
        "errorMessage": str(err),
        "errorType": getattr(err, "error_type", None) or type(err).__name__,
        "requestId": request_id,
        "stackTrace": traceback.format_list([f for f in traceback.extract_tb(err.__traceback__) if f.filename != __file__]),
    }


def invoke(handler: Handler, request: dict[str, Any]) -> dict[str, Any]:
    request_id = request["request_id"]
    env = os.environ
    context = LambdaContext(
        function_name=env["AWS_LAMBDA_FUNCTION_NAME"],
        function_version=env.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
        invoked_function_arn=request["invoked_function_arn"],
        memory_limit_in_mb=int(env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")),
        aws_request_id=request_id,
        log_group_name=env.get("AWS_LAMBDA_LOG_GROUP_NAME", ""),
        log_stream_name=env.get("AWS_LAMBDA_LOG_STREAM_NAME", ""),
        deadline_ms=request["deadline_ms"],
    )
    try:
        result = handler(request["event"], context)
    except Exception as err:
        return {"request_id": request_id, "error": error_object(err, request_id)}
    try:
        return {"request_id": request_id, "payload": json.dumps(result)}
    except (TypeError, ValueError) as err:
        error = {"errorMessage": f"Unable to marshal response: {err}", "errorType": "Runtime.MarshalError", "requestId": request_id, "stackTrace": []}
        return {"request_id": request_id, "error": error}


def serve(requests: TextIO, answers: TextIO) -> None:
    def answer(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    handler_name = os.environ["_HANDLER"]
    handler: Handler | None = None
    init_error: InitError | None = None
    try:
        handler = load_handler(handler_name)
    except InitError as err:
        init_error = err
    answer({"ready": True, "init_error": init_error.error_type if init_error else None})  # the init phase is over
    for line in requests:
        request = json.loads(line)
        if handler is None:  # Lambda runs a failed init again on the next invocation
            try:
                handler = load_handler(handler_name)
            except InitError as err:
                init_error = err
        if handler is None:
            assert init_error is not None
            answer({"request_id": request["request_id"], "error": error_object(init_error, request["request_id"])})
            continue
        answer(invoke(handler, request))
        sys.stdout.flush()


def main() -> None:
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    serve(requests, answers)


if __name__ == "__main__":
    main()
