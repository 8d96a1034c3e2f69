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



def rendezvous(event: Any, context: Any) -> dict[str, Any]:
    """Meets the other invocations of its group: proof that they run at the same time, or one after another.

    The group is the SQS message of an SQS event (its ``messageId``), else ``event["group"]`` ("all"); the
    event, or the SQS message's body, says how many invocations to wait for (``parties``, 2). It leaves a
    marker in ``FIXTURE_RENDEZVOUS_DIR``, then waits until ``parties`` invocations of its group have left
    theirs, or until a second is left of its timeout (an invocation that runs alone returns, having met no
    one). Then it sleeps ``event["then_sleep"]`` seconds if asked, and writes ``<request id>.out`` with what
    it saw: when it started and ended (wall clock), how many it met, its pid and log stream. Given an SQS
    event, it reports each message failed or not by its body's ``outcome``: ``succeed`` (the default),
    ``fail``, or ``claim`` (failed unless this invocation was the first to create the message's claim file).
    """
    started = time.time()
    directory = os.environ["FIXTURE_RENDEZVOUS_DIR"]
    records = event.get("Records", []) if isinstance(event, dict) else []
    if records:
        group, parties = records[0]["messageId"], json.loads(records[0]["body"]).get("parties", 2)
    else:
        group, parties = event.get("group", "all"), event.get("parties", 2)
    with open(os.path.join(directory, f"{group}.{context.aws_request_id}.in"), "w", encoding="utf-8") as marker:
        marker.write(json.dumps(event))

    def arrived() -> int:
        return sum(name.startswith(f"{group}.") and name.endswith(".in") for name in os.listdir(directory))

    while arrived() < parties and context.get_remaining_time_in_millis() > 1000:
        time.sleep(0.01)
    met = arrived()
    if event.get("then_sleep"):
        time.sleep(event["then_sleep"])
    failed = []
    for record in records:
        outcome = json.loads(record["body"]).get("outcome", "succeed")
        if outcome == "claim":
            try:
                os.close(os.open(os.path.join(directory, f"claim-{record['messageId']}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                continue
            except FileExistsError:
                pass
        if outcome in ("fail", "claim"):
            failed.append({"itemIdentifier": record["messageId"]})
    seen = {"started": started, "ended": time.time(), "met": met, "pid": os.getpid(), "log_stream": context.log_stream_name,
            "failed": [f["itemIdentifier"] for f in failed]}
    with open(os.path.join(directory, f"{context.aws_request_id}.out"), "w", encoding="utf-8") as out:
        out.write(json.dumps(seen))
    return {"batchItemFailures": failed, **seen}
