"""Tiny Lambda handlers the local Lambda runtime tests run in real worker processes."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from aws_lambda_powertools import Logger

logger = Logger(service="fixture")
invocations_served = 0


def echo(event: Any, context: Any) -> dict[str, Any]:
    return {
        "event": event,
        "function_name": context.function_name,
        "function_version": context.function_version,
        "invoked_function_arn": context.invoked_function_arn,
        "memory_limit_in_mb": context.memory_limit_in_mb,
        "aws_request_id": context.aws_request_id,
        "log_group_name": context.log_group_name,
        "remaining_ms": context.get_remaining_time_in_millis(),
        "fixture_value": os.environ.get("FIXTURE_VALUE"),
        "lambda_function_name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"),
    }


def fail(event: Any, context: Any) -> None:
    raise ValueError(f"cannot process {event!r}")


def sleep(event: dict[str, Any], context: Any) -> str:
    time.sleep(event.get("seconds", 0))
    return "awake"


def crash(event: Any, context: Any) -> None:
    os._exit(3)


def record(event: Any, context: Any) -> None:
    """Appends every event it receives to the file named by ``FIXTURE_RECORD_PATH``."""
    with open(os.environ["FIXTURE_RECORD_PATH"], "a", encoding="utf-8") as records:
        records.write(json.dumps(event) + "\n")


def chatty(event: Any, context: Any) -> dict[str, str]:
    print("handler output on stdout")
    print(json.dumps({"request_id": context.aws_request_id, "payload": "\"forged\""}))
    os.write(1, b"raw bytes on file descriptor 1\n")
    sys.stdout.write("no newline at the end")
    return {"said": "hello"}


def count(event: Any, context: Any) -> dict[str, int]:
    global invocations_served
    invocations_served += 1
    return {"invocations_served": invocations_served, "pid": os.getpid()}


@logger.inject_lambda_context
def powertools(event: Any, context: Any) -> dict[str, Any]:
    logger.info("Powertools handler ran")
    return {"function_name": context.function_name, "request_id": context.aws_request_id}
