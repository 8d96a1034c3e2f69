"""The local Lambda runtime driven through a real boto3 Lambda client, as handlers and event sources use it."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from ocr_platform.local.function_specs import FunctionSpec
from ocr_platform.local.lambda_runtime import FunctionNotFoundError, LambdaRuntime, RequestTooLargeError

REPO_ROOT = Path(__file__).resolve().parents[2]
ARN_PREFIX = "arn:aws:lambda:us-east-1:123456789012:function:"
FIXTURES = "tests.local.fixture_handlers"
#: Deadlines of waits that end as soon as their condition holds: generous, so a slow or busy machine only waits longer.
WAIT_SECONDS = 60
#: The handler's wall clock against the test's monotonic one, and milliseconds truncated on both sides.
CLOCK_SLACK_MS = 10


@pytest.fixture(scope="module")
def record_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lambda-runtime") / "records.jsonl"


@pytest.fixture(scope="module")
def runtime(record_path: Path) -> Iterator[LambdaRuntime]:
    functions = [
        FunctionSpec("echo", f"{FIXTURES}.echo", {"FIXTURE_VALUE": "from-spec"}, timeout_seconds=5, memory_mb=512),
        FunctionSpec("fail", f"{FIXTURES}.fail", retry_attempts=1, on_failure="recorder"),
        FunctionSpec("sleeper", f"{FIXTURES}.sleep", timeout_seconds=1),
        FunctionSpec("crasher", f"{FIXTURES}.crash"),
        FunctionSpec("recorder", f"{FIXTURES}.record", {"FIXTURE_RECORD_PATH": str(record_path)}),
        FunctionSpec("chatty", f"{FIXTURES}.chatty"),
        FunctionSpec("counter", f"{FIXTURES}.count"),
        FunctionSpec("powertools", f"{FIXTURES}.powertools"),
        FunctionSpec("missing", "tests.local.no_such_module.handler"),
    ]
    base = {
        "AWS_DEFAULT_REGION": "us-east-1",
        "FIXTURE_VALUE": "from-base",
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p),
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    with LambdaRuntime(functions, base_environment=base, retry_delays_seconds=(0.0,)) as lambdas:
        yield lambdas


@pytest.fixture(scope="module")
def client(runtime: LambdaRuntime) -> Any:
    return boto3.client(
        "lambda", endpoint_url=runtime.url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=30),
    )


def invoke(client: Any, name: str, payload: Any = None, **kwargs: Any) -> tuple[dict[str, Any], Any]:
    response = client.invoke(FunctionName=name, Payload=json.dumps(payload if payload is not None else {}), **kwargs)
    body = response["Payload"].read()
    return response, json.loads(body) if body else None


def read_records(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_request_response_returns_the_handler_value_with_lambda_context(client: Any) -> None:
    started = time.monotonic()
    response, body = invoke(client, "echo", {"hello": "world"})
    call_ms = (time.monotonic() - started) * 1000

    assert response["StatusCode"] == 200
    assert response["ExecutedVersion"] == "$LATEST"
    assert "FunctionError" not in response
    assert body["event"] == {"hello": "world"}
    assert body["aws_request_id"] == response["ResponseMetadata"]["RequestId"]
    assert (body["function_name"], body["function_version"], body["memory_limit_in_mb"]) == ("echo", "$LATEST", 512)
    assert body["invoked_function_arn"] == f"{ARN_PREFIX}echo"
    assert body["log_group_name"] == "/aws/lambda/echo"
    # The function's 5 s timeout, less at most what the whole call took (however long this machine took for it).
    assert 5000 - call_ms - CLOCK_SLACK_MS <= body["remaining_ms"] <= 5000
    assert (body["fixture_value"], body["lambda_function_name"]) == ("from-spec", "echo")


@pytest.mark.parametrize("name", [f"{ARN_PREFIX}echo", f"{ARN_PREFIX}echo:$LATEST", "echo:$LATEST", "123456789012:function:echo"])
def test_function_name_may_be_an_arn_or_qualified(client: Any, name: str) -> None:
    response, body = invoke(client, name, {"n": 1})

    assert response["StatusCode"] == 200 and body["event"] == {"n": 1}
    assert body["invoked_function_arn"].startswith(f"{ARN_PREFIX}echo")


def test_handler_exception_is_an_unhandled_function_error(client: Any) -> None:
    response, body = invoke(client, "fail", {"job": 7})

    assert response["StatusCode"] == 200
    assert response["FunctionError"] == "Unhandled"
    assert body["errorType"] == "ValueError"
    assert body["errorMessage"] == "cannot process {'job': 7}"
    assert body["requestId"] == response["ResponseMetadata"]["RequestId"]
    assert any("raise ValueError" in frame for frame in body["stackTrace"])


def test_unimportable_handler_is_an_import_module_error(client: Any) -> None:
    response, body = invoke(client, "missing")

    assert response["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Runtime.ImportModuleError"
    assert body["errorMessage"].startswith("Unable to import module 'tests.local.no_such_module'")


@pytest.mark.parametrize("name", ["nope", f"{ARN_PREFIX}nope", "echo:7"])
def test_unknown_function_raises_resource_not_found(client: Any, name: str) -> None:
    with pytest.raises(client.exceptions.ResourceNotFoundException) as raised:
        client.invoke(FunctionName=name, Payload=b"{}")

    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert error["Error"]["Message"] == f"Function not found: {ARN_PREFIX}{name.removeprefix(ARN_PREFIX)}"


def test_payload_that_is_not_json_is_rejected(client: Any) -> None:
    with pytest.raises(client.exceptions.InvalidRequestContentException):
        client.invoke(FunctionName="echo", Payload=b"{not json")


#: Lambda's invocation payload quotas: 6 MB synchronous (request and response), 1 MB asynchronous
#: (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
SYNC_LIMIT, ASYNC_LIMIT = 6 * 1024 * 1024, 1024 * 1024


def _payload_of(size: int) -> bytes:
    """A JSON payload of exactly ``size`` bytes."""
    return b'{"data": "' + b"x" * (size - 12) + b'"}'


@pytest.mark.parametrize(("invocation_type", "limit"), [("RequestResponse", SYNC_LIMIT), ("Event", ASYNC_LIMIT), ("DryRun", SYNC_LIMIT)])
def test_a_payload_over_lambdas_quota_is_refused_with_413_and_nothing_runs(
    client: Any, runtime: LambdaRuntime, invocation_type: str, limit: int,
) -> None:
    before = runtime.stats()["counter"]["invocations"]

    with pytest.raises(client.exceptions.RequestTooLargeException) as raised:
        client.invoke(FunctionName="counter", InvocationType=invocation_type, Payload=_payload_of(limit + 1))

    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413
    assert str(limit) in raised.value.response["Error"]["Message"]
    assert runtime.wait_idle(timeout=WAIT_SECONDS)
    assert runtime.stats()["counter"]["invocations"] == before


def test_an_event_at_the_async_quota_is_accepted(client: Any, runtime: LambdaRuntime) -> None:
    response = client.invoke(FunctionName="counter", InvocationType="Event", Payload=_payload_of(ASYNC_LIMIT))

    assert response["StatusCode"] == 202
    assert runtime.wait_idle(timeout=WAIT_SECONDS)


def test_in_process_callers_are_held_to_the_same_quotas(runtime: LambdaRuntime) -> None:
    with pytest.raises(RequestTooLargeError):
        runtime.invoke_async("counter", {"data": "x" * ASYNC_LIMIT})
    with pytest.raises(RequestTooLargeError):
        runtime.invoke("counter", {"data": "x" * SYNC_LIMIT})


def test_a_response_over_6_mb_is_a_function_error_not_the_value(client: Any) -> None:
    # A request just under the quota; echo returns it with its context, just over.
    response, body = invoke(client, "echo", json.loads(_payload_of(SYNC_LIMIT - 50)))

    assert response["StatusCode"] == 200
    assert response["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Function.ResponseSizeTooLarge"
    assert str(SYNC_LIMIT) in body["errorMessage"]


def test_dry_run_answers_204_without_running(client: Any, runtime: LambdaRuntime) -> None:
    before = runtime.stats()["counter"]["invocations"]

    response = client.invoke(FunctionName="counter", InvocationType="DryRun")

    assert response["StatusCode"] == 204
    assert runtime.stats()["counter"]["invocations"] == before


def test_event_invocation_is_accepted_then_executed(client: Any, runtime: LambdaRuntime, record_path: Path) -> None:
    record_path.unlink(missing_ok=True)

    response = client.invoke(FunctionName="recorder", InvocationType="Event", Payload=json.dumps({"job_id": "j-1"}))

    assert response["StatusCode"] == 202
    assert response["Payload"].read() == b""
    assert runtime.wait_idle(timeout=WAIT_SECONDS)
    assert read_records(record_path) == [{"job_id": "j-1"}]


def test_failed_event_is_retried_then_sent_to_the_on_failure_destination(client: Any, runtime: LambdaRuntime, record_path: Path) -> None:
    record_path.unlink(missing_ok=True)
    before = runtime.stats()["fail"]

    response = client.invoke(FunctionName="fail", InvocationType="Event", Payload=json.dumps({"job_id": "j-2"}))
    assert runtime.wait_idle(timeout=WAIT_SECONDS)

    [record] = read_records(record_path)
    request_id = response["ResponseMetadata"]["RequestId"]
    assert set(record) == {"version", "timestamp", "requestContext", "requestPayload", "responseContext", "responsePayload"}
    assert record["version"] == "1.0"
    assert record["timestamp"].endswith("Z") and "T" in record["timestamp"]
    assert record["requestContext"] == {
        "requestId": request_id, "functionArn": f"{ARN_PREFIX}fail:$LATEST",
        "condition": "RetriesExhausted", "approximateInvokeCount": 2,
    }
    assert record["requestPayload"] == {"job_id": "j-2"}
    assert record["responseContext"] == {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"}
    assert record["responsePayload"]["errorType"] == "ValueError"
    assert record["responsePayload"]["errorMessage"] == "cannot process {'job_id': 'j-2'}"
    assert record["responsePayload"]["requestId"] == request_id
    after = runtime.stats()["fail"]
    assert (after["invocations"] - before["invocations"], after["errors"] - before["errors"]) == (2, 2)


def test_timeout_ends_the_worker_and_the_next_invocation_runs(client: Any) -> None:
    started = time.monotonic()
    response, body = invoke(client, "sleeper", {"seconds": 30})

    assert time.monotonic() - started < 30  # the answer came before the handler could have finished its sleep
    assert response["FunctionError"] == "Unhandled"
    assert body == {
        "errorType": "Sandbox.Timedout",
        "errorMessage": f"RequestId: {response['ResponseMetadata']['RequestId']} Error: Task timed out after 1.00 seconds",
    }
    response, body = invoke(client, "sleeper", {"seconds": 0})
    assert "FunctionError" not in response and body == "awake"


def test_crash_is_a_runtime_exit_error_and_the_worker_restarts(client: Any, runtime: LambdaRuntime) -> None:
    for _ in range(2):
        response, body = invoke(client, "crasher")

        assert response["FunctionError"] == "Unhandled"
        assert body == {
            "errorType": "Runtime.ExitError",
            "errorMessage": f"RequestId: {response['ResponseMetadata']['RequestId']} Error: Runtime exited with error: exit status 3",
        }


def test_module_state_survives_between_invocations(client: Any) -> None:
    _, first = invoke(client, "counter")
    _, second = invoke(client, "counter")

    assert second["invocations_served"] == first["invocations_served"] + 1
    assert second["pid"] == first["pid"]


def test_handler_output_on_stdout_does_not_corrupt_the_protocol(client: Any) -> None:
    for _ in range(2):
        response, body = invoke(client, "chatty")

        assert "FunctionError" not in response
        assert body == {"said": "hello"}


def test_powertools_inject_lambda_context_accepts_the_context(client: Any) -> None:
    response, body = invoke(client, "powertools")

    assert "FunctionError" not in response
    assert body == {"function_name": "powertools", "request_id": response["ResponseMetadata"]["RequestId"]}


def test_python_api_invokes_in_process(runtime: LambdaRuntime, record_path: Path) -> None:
    ok = runtime.invoke("echo", {"a": 1})
    failed = runtime.invoke("fail", {"b": 2})

    assert ok.status_code == 200 and ok.error is None and ok.payload["event"] == {"a": 1}
    assert failed.payload is None and failed.function_error == "Unhandled" and (failed.error or {}).get("errorType") == "ValueError"
    assert runtime.invoke("echo", {}, invocation_type="DryRun").status_code == 204
    with pytest.raises(FunctionNotFoundError):
        runtime.invoke_async("nope", {})

    record_path.unlink(missing_ok=True)
    runtime.invoke_async("recorder", {"first": True})
    assert runtime.invoke("recorder", {"second": True}, invocation_type="Event").status_code == 202
    assert runtime.wait_idle(timeout=WAIT_SECONDS)
    assert read_records(record_path) == [{"first": True}, {"second": True}]


def test_stop_ends_the_workers_and_releases_the_port() -> None:
    spec = FunctionSpec("echo", f"{FIXTURES}.echo")
    environment = {"PYTHONPATH": str(REPO_ROOT)}
    with LambdaRuntime([spec], base_environment=environment) as lambdas:
        port = int(lambdas.url.rsplit(":", 1)[1])
        assert lambdas.invoke("echo", {}).error is None
        worker = lambdas.functions["echo"].worker
        assert worker is not None

    assert worker.process.poll() is not None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1)


def test_injected_faults_crash_or_delay_only_the_matching_invocations(tmp_path: Path) -> None:
    from ocr_platform.local.faults import Fault, FaultInjector

    faults = FaultInjector(
        [
            Fault("slow", "crash", match="job-crash", seconds=0.3),
            Fault("slow", "delay", match="job-late", seconds=2.0),  # the timeout is 2 s: never starts
            Fault("slow", "delay", match="job-delayed", seconds=0.5),  # starts late, still in time
        ],
        aliases={"ocr-x-slow": "slow"},
    )
    functions = [FunctionSpec("ocr-x-slow", f"{FIXTURES}.sleep", timeout_seconds=2)]
    base = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    with LambdaRuntime(functions, base_environment=base, faults=faults) as lambdas:
        crashed = lambdas.invoke("ocr-x-slow", {"job_id": "job-crash", "seconds": 30})  # never answers by itself
        late = lambdas.invoke("ocr-x-slow", {"job_id": "job-late"})
        started = time.monotonic()
        delayed = lambdas.invoke("ocr-x-slow", {"job_id": "job-delayed"})
        delayed_seconds = time.monotonic() - started
        again = lambdas.invoke("ocr-x-slow", {"job_id": "job-crash", "seconds": 0.4})  # count 1: spent

        assert crashed.error is not None and late.error is not None
        assert crashed.error["errorType"] == "Runtime.ExitError" and "signal: killed" in crashed.error["errorMessage"]
        assert late.error["errorType"] == "Sandbox.Timedout"
        assert (delayed.error, delayed.payload) == (None, "awake") and delayed_seconds >= 0.5
        assert (again.error, again.payload) == (None, "awake")
        assert faults.counts() == {"slow:crash": 1, "slow:delay": 2}
        records = lambdas.invocations("ocr-x-slow")
        assert [(r.event["job_id"], r.error_type) for r in records] == [
            ("job-crash", "Runtime.ExitError"), ("job-late", "Sandbox.Timedout"), ("job-delayed", None), ("job-crash", None),
        ]


SLOW_INIT_MODULE = '''
import os, time

time.sleep(float(os.environ["INIT_SECONDS"]))  # the init phase: imports, engines built at import


def handler(event, context):
    return {"remaining_ms": context.get_remaining_time_in_millis(), "pid": os.getpid()}
'''


def slow_init_runtime(tmp_path: Path, *, init_seconds: float, init_limit: float, timeout: int) -> LambdaRuntime:
    """A runtime with one function whose module import takes ``init_seconds``."""
    (tmp_path / "slow_init.py").write_text(SLOW_INIT_MODULE)
    spec = FunctionSpec("slow-init", "slow_init.handler", {"INIT_SECONDS": str(init_seconds)}, timeout_seconds=timeout)
    base = {"PYTHONPATH": os.pathsep.join(p for p in (str(tmp_path), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    return LambdaRuntime([spec], base_environment=base, init_timeout_seconds=init_limit)


def test_init_phase_does_not_count_against_the_handler_timeout(tmp_path: Path) -> None:
    with slow_init_runtime(tmp_path, init_seconds=1.5, init_limit=10.0, timeout=1) as lambdas:
        first = lambdas.invoke("slow-init", {})  # arrives while the init phase runs
        durations = lambdas.wait_initialized(timeout=WAIT_SECONDS)

    # The 1.5 s init outlasted the 1 s timeout, yet the handler ran, on a clock of its own that started after the init.
    assert first.error is None and 0 <= first.payload["remaining_ms"] <= 1000
    assert durations["slow-init"] is not None and durations["slow-init"] >= 1.5


def test_init_past_its_limit_is_retried_inside_the_first_invocation(tmp_path: Path) -> None:
    with slow_init_runtime(tmp_path, init_seconds=1.0, init_limit=0.5, timeout=10) as lambdas:
        assert lambdas.wait_initialized(timeout=WAIT_SECONDS) == {"slow-init": None}  # ended at its limit
        started = time.monotonic()
        first = lambdas.invoke("slow-init", {})
        seconds = time.monotonic() - started
        started = time.monotonic()
        warm = lambdas.invoke("slow-init", {})
        warm_ms = (time.monotonic() - started) * 1000

    # The retried init ran on the invocation's clock: the handler had at most what the 1 s init left of the 10 s.
    assert first.error is None and seconds >= 1.0 and first.payload["remaining_ms"] <= 9000 + CLOCK_SLACK_MS
    # The warm invocation ran in the same environment (no init again), with its whole timeout less its own call.
    assert warm.error is None and warm.payload["pid"] == first.payload["pid"]
    assert warm.payload["remaining_ms"] >= 10_000 - warm_ms - CLOCK_SLACK_MS


def test_a_retried_init_longer_than_the_timeout_times_the_invocation_out(tmp_path: Path) -> None:
    with slow_init_runtime(tmp_path, init_seconds=30.0, init_limit=0.5, timeout=1) as lambdas:
        started = time.monotonic()
        result = lambdas.invoke("slow-init", {})
        seconds = time.monotonic() - started

    assert result.error is not None and result.error["errorType"] == "Sandbox.Timedout"
    assert result.error["errorMessage"].endswith("Task timed out after 1.00 seconds")
    # At least the 1 s timeout (after the first init's 0.5 s limit), and the 30 s init was not waited for.
    assert 1.0 <= seconds < 30
