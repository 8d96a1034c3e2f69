"""Shared fixtures: an in-process moto account holding the platform's resources, and handler drivers.

``platform`` builds the bucket, jobs table (with the status GSI), OCR queue + DLQ, the three SNS topics,
a SageMaker async endpoint, the webhook queue + DLQ with its signing secret, and an EventBridge rule that
records every ``ocr-platform`` event on the default bus in an SQS queue, in moto; points the handlers'
environment at them, and offers helpers that deliver events the way Lambda would (SQS batches, SNS
notifications, async invokes) and read back the completion events published.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

# The handlers' Metrics read their namespace when first imported, as on Lambda, where the stack sets it.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "OcrPlatform/test")

from ocr_platform.core import defaults  # noqa: E402
from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.core.settings import ENV
from ocr_platform.handlers import _services  # noqa: E402
from ocr_platform.jobs.store import JobStore, NewJob
from ocr_platform.local.provisioning import create_jobs_table
from ocr_platform.local.supervisor import STATE_DIR_ENV
from tests import documents
from tests.aws_events import ACCOUNT, REGION, FakeLambdaContext, sns_event, sqs_event

BUCKET = "ocr-test-bucket"
TABLE = "ocr-test-jobs"
PROCESSOR = "ocr-test-processor"
ENDPOINT = "ocr-test-vl"
VARIANT = "AllTraffic"
MAX_RECEIVES = 3


@pytest.fixture(autouse=True, scope="session")
def _isolated_from_the_users_machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the whole session off the user's own state, whatever a test or a fixture forgets: a local
    stack they run (``~/.ocr-platform/local``) stays theirs, and their ``~/.aws`` config and credentials
    are never read. Subprocesses inherit the same environment."""
    home = tmp_path_factory.mktemp("isolated-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(STATE_DIR_ENV, str(home / "ocr-platform-local"))
        patch.setenv("AWS_CONFIG_FILE", str(home / "no-aws-config"))
        patch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-aws-credentials"))
        yield


@pytest.fixture(autouse=True)
def _aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never reach a real account from tests."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "POWERTOOLS_SERVICE_NAME": "ocr-tests",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }.items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL") or n == "AWS_PROFILE"]:
        monkeypatch.delenv(name, raising=False)


@dataclass
class Platform:
    """The moto-backed platform and the calls each handler made to AWS."""

    s3: Any
    sqs: Any
    sns: Any
    sagemaker: Any
    queue_url: str
    queue_arn: str
    dlq_url: str
    topics: dict[str, str]
    taps: dict[str, str]
    store: JobStore
    layout: StorageLayout
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: The webhook queue (the functions that finish jobs send ``WebhookRequest``s to it) and its DLQ.
    webhook_queue_url: str = ""
    webhook_queue_arn: str = ""
    webhook_dlq_url: str = ""
    #: The Secrets Manager secret that signs webhooks, and its value.
    webhook_secret_arn: str = ""
    webhook_secret: str = ""
    #: Where the EventBridge rule ``{"source": ["ocr-platform"]}`` on the default bus delivers each event.
    events_queue_url: str = ""
    _events: list[dict[str, Any]] = field(default_factory=list)

    # -- inspection -------------------------------------------------------------------------------
    def job(self, job_id: str) -> dict[str, Any]:
        item = self.store.get(job_id)
        assert item is not None, f"job {job_id} has no item"
        return item

    def read_json(self, key: str) -> Any:
        return json.loads(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())

    def keys(self, prefix: str = "") -> list[str]:
        return [o["Key"] for o in self.s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])]

    def events(self) -> list[dict[str, Any]]:
        """Every ``ocr-platform`` EventBridge event published so far in this test (oldest first), each as
        EventBridge delivers it to a target: ``{"id", "source", "detail-type", "detail": {...}, ...}``."""
        while True:
            received = self.sqs.receive_message(QueueUrl=self.events_queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not received:
                return list(self._events)
            for m in received:
                self._events.append(json.loads(m["Body"]))
                self.sqs.delete_message(QueueUrl=self.events_queue_url, ReceiptHandle=m["ReceiptHandle"])

    def variant(self) -> dict[str, Any]:
        desc = self.sagemaker.describe_endpoint(EndpointName=ENDPOINT)
        return next(v for v in desc["ProductionVariants"] if v["VariantName"] == VARIANT)

    def set_endpoint_status(self, status: str) -> None:
        from moto.sagemaker.models import sagemaker_backends

        sagemaker_backends[ACCOUNT][REGION].endpoints[ENDPOINT].endpoint_status = status

    def set_desired_instances(self, count: int) -> None:
        self.sagemaker.update_endpoint_weights_and_capacities(
            EndpointName=ENDPOINT, DesiredWeightsAndCapacities=[{"VariantName": VARIANT, "DesiredInstanceCount": count}]
        )

    # -- delivery ---------------------------------------------------------------------------------
    def enqueue(self, body: dict[str, Any] | str) -> str:
        text = body if isinstance(body, str) else json.dumps(body)
        return self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=text)["MessageId"]

    def put_document(self, job_id: str, name: str = "page.png", data: bytes | None = None) -> str:
        """Upload a job's document (default: a tiny valid PNG, which intake accepts); return its URI."""
        from tests.documents import tiny_png

        data = tiny_png() if data is None else data
        uri = self.layout.document_uri(job_id, name)
        self.s3.put_object(Bucket=uri.bucket, Key=uri.key, Body=data)
        return str(uri)

    def processing_job(self, job_id: str, model: str, name: str, data: bytes, *, language: str = "en") -> dict[str, Any]:
        """A job as the invoker leaves it for the processor: its document uploaded, its item PROCESSING on the Lambda
        route; the processor's payload (the job message)."""
        message = {"job_id": job_id, "model": model, "input": self.put_document(job_id, name, data), "language": language}
        self.store.create(NewJob(job_id, model, message["input"], language=language))
        self.store.mark_processing(job_id, "lambda")
        return message

    def run_invoker(self) -> dict[str, Any]:
        """Receive one batch and run the invoker on it as the SQS event source does, deleting what succeeded."""
        from ocr_platform.handlers import invoker

        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=1, AttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        assert messages, "no message on the OCR queue"
        response = invoker.handler(sqs_event(messages, self.queue_arn), FakeLambdaContext(function_name="ocr-invoker"))
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        for m in messages:
            if m["MessageId"] not in failed:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        return response

    def run_ingest(self, key: str) -> dict[str, Any]:
        """Run the ingest function on the event S3 sends to EventBridge for the object at ``key``; its response."""
        import uuid

        from ocr_platform.handlers import ingest
        from ocr_platform.local.events import s3_object_created_event

        head = self.s3.head_object(Bucket=BUCKET, Key=key)
        event = s3_object_created_event(bucket=BUCKET, key=key, size=head["ContentLength"], etag=head["ETag"],
                                        event_id=str(uuid.uuid4()), time_iso="2026-11-22T07:00:00Z")
        return ingest.handler(event, FakeLambdaContext(function_name="ocr-ingest"))

    def run_queued_job(self) -> dict[str, Any]:
        """The invoker on the queued message, then the processor on what it launched; the job's result.json, validated."""
        from ocr_platform.core.results import validate_result

        assert self.run_invoker() == {"batchItemFailures": []}
        [payload] = self.processor_payloads()
        assert self.run_processor(payload)["outcome"] == "completed"
        return validate_result(self.read_json(f"results/{payload['job_id']}/result.json"), job_id=payload["job_id"])

    def processor_payloads(self) -> list[dict[str, Any]]:
        return [json.loads(call["Payload"]) for call in self.calls.get("Invoke", [])]

    def run_processor(self, payload: dict[str, Any]) -> dict[str, Any]:
        from ocr_platform.handlers import processor

        return processor.handler(payload, FakeLambdaContext(function_name="ocr-processor"))

    def sns_delivery(self, topic: str, message: str) -> dict[str, Any]:
        """Publish to a real (moto) topic; return the Lambda event SNS delivers to the topic's subscriber."""
        self.sns.publish(TopicArn=self.topics[topic], Message=message)
        received = self.sqs.receive_message(QueueUrl=self.taps[topic], MaxNumberOfMessages=10).get("Messages", [])
        assert received, f"nothing delivered from topic {topic}"
        for m in received:
            self.sqs.delete_message(QueueUrl=self.taps[topic], ReceiptHandle=m["ReceiptHandle"])
        return sns_event([json.loads(m["Body"]) for m in received], f"{self.topics[topic]}:sub")

    def publish(self, topic: str, message: str) -> dict[str, Any]:
        """Publish to a real (moto) topic and hand the delivered envelope to that topic's Lambda."""
        from ocr_platform.handlers import completion, scale_in

        event = self.sns_delivery(topic, message)
        handler = scale_in.handler if topic == "scale-in" else completion.handler
        return handler(event, FakeLambdaContext(function_name=f"ocr-{topic}"))


def _record_calls(client: Any, operation: str, sink: dict[str, list[dict[str, Any]]]) -> None:
    def record(params: dict[str, Any], **_: Any) -> None:
        sink.setdefault(operation, []).append(dict(params))

    client.meta.events.register(f"provide-client-params.{client.meta.service_model.service_name}.{operation}", record)


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    with mock_aws(config={"lambda": {"use_docker": False}}):
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)

        create_jobs_table(boto3.client("dynamodb", region_name=REGION), TABLE)  # as the stack defines it

        sqs = boto3.client("sqs", region_name=REGION)
        dlq_url = sqs.create_queue(QueueName="ocr-test-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        queue_url = sqs.create_queue(
            QueueName="ocr-test-queue",
            Attributes={
                "VisibilityTimeout": "0",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVES)}),
            },
        )["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

        sns = boto3.client("sns", region_name=REGION)
        topics, taps = {}, {}
        for name in ("success", "error", "scale-in"):
            topics[name] = sns.create_topic(Name=f"ocr-test-{name}")["TopicArn"]
            taps[name] = sqs.create_queue(QueueName=f"ocr-test-tap-{name}")["QueueUrl"]
            tap_arn = sqs.get_queue_attributes(QueueUrl=taps[name], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            sns.subscribe(TopicArn=topics[name], Protocol="sqs", Endpoint=tap_arn)

        webhook_dlq_url = sqs.create_queue(QueueName="ocr-test-webhook-dlq")["QueueUrl"]
        webhook_dlq_arn = sqs.get_queue_attributes(QueueUrl=webhook_dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        webhook_queue_url = sqs.create_queue(
            QueueName="ocr-test-webhooks",
            Attributes={
                "VisibilityTimeout": str(defaults.webhook_queue_visibility_timeout_seconds()),
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": webhook_dlq_arn, "maxReceiveCount": str(defaults.webhook_queue_max_receive_count())}
                ),
            },
        )["QueueUrl"]
        webhook_queue_arn = sqs.get_queue_attributes(QueueUrl=webhook_queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        webhook_secret = secrets.token_hex(32)
        webhook_secret_arn = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="ocr-test-webhook-secret", SecretString=webhook_secret
        )["ARN"]

        events_queue_url = sqs.create_queue(QueueName="ocr-test-events-record")["QueueUrl"]
        events_queue_arn = sqs.get_queue_attributes(QueueUrl=events_queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        eventbridge = boto3.client("events", region_name=REGION)
        eventbridge.put_rule(Name="ocr-test-events-record", EventPattern=json.dumps({"source": ["ocr-platform"]}), State="ENABLED")
        eventbridge.put_targets(Rule="ocr-test-events-record", Targets=[{"Id": "record", "Arn": events_queue_arn}])

        iam = boto3.client("iam", region_name=REGION)
        role_arn = iam.create_role(RoleName="ocr-test-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        boto3.client("lambda", region_name=REGION).create_function(
            FunctionName=PROCESSOR,
            Role=role_arn,
            PackageType="Image",
            Code={"ImageUri": f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/cpu-ocr:1"},
        )

        sagemaker = boto3.client("sagemaker", region_name=REGION)
        sagemaker.create_model(
            ModelName="ocr-test-vl-model",
            ExecutionRoleArn=role_arn,
            PrimaryContainer={"Image": f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/vl-endpoint:1"},
        )
        sagemaker.create_endpoint_config(
            EndpointConfigName="ocr-test-vl-config",
            ProductionVariants=[
                # moto's instance-type list predates ml.g5; the stack itself uses ml.g5.xlarge.
                {"VariantName": VARIANT, "ModelName": "ocr-test-vl-model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}
            ],
            AsyncInferenceConfig={
                "ClientConfig": {"MaxConcurrentInvocationsPerInstance": 4},
                "OutputConfig": {
                    "S3OutputPath": f"s3://{BUCKET}/async/outputs/",
                    "S3FailurePath": f"s3://{BUCKET}/async/failures/",
                    "NotificationConfig": {"SuccessTopic": topics["success"], "ErrorTopic": topics["error"]},
                },
            },
        )
        sagemaker.create_endpoint(EndpointName=ENDPOINT, EndpointConfigName="ocr-test-vl-config")

        env = {
            ENV.TABLE_NAME: TABLE,
            ENV.BUCKET_NAME: BUCKET,
            ENV.PROCESSOR_FUNCTION: PROCESSOR,
            ENV.QUEUE_URL: queue_url,
            ENV.ENDPOINT_NAME: ENDPOINT,
            ENV.VARIANT_NAME: VARIANT,
            ENV.MAX_RECEIVE_COUNT: str(MAX_RECEIVES),
            ENV.INFLIGHT_WINDOW_SECONDS: "3900",
            ENV.WEBHOOK_QUEUE_URL: webhook_queue_url,
            ENV.WEBHOOK_DLQ_URL: webhook_dlq_url,
            ENV.WEBHOOK_SECRET_ARN: webhook_secret_arn,
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        _services.reset()

        calls: dict[str, list[dict[str, Any]]] = {}
        _record_calls(_services._client("lambda"), "Invoke", calls)
        _record_calls(_services._client("sagemaker-runtime"), "InvokeEndpointAsync", calls)
        _record_calls(_services._client("sagemaker"), "UpdateEndpointWeightsAndCapacities", calls)

        platform = Platform(
            s3=s3,
            sqs=sqs,
            sns=sns,
            sagemaker=sagemaker,
            queue_url=queue_url,
            queue_arn=queue_arn,
            dlq_url=dlq_url,
            topics=topics,
            taps=taps,
            store=JobStore(TABLE, dynamodb=boto3.resource("dynamodb", region_name=REGION)),
            layout=StorageLayout(BUCKET),
            calls=calls,
            webhook_queue_url=webhook_queue_url,
            webhook_queue_arn=webhook_queue_arn,
            webhook_dlq_url=webhook_dlq_url,
            webhook_secret_arn=webhook_secret_arn,
            webhook_secret=webhook_secret,
            events_queue_url=events_queue_url,
        )
        platform.set_desired_instances(0)
        calls.clear()
        yield platform
        _services.reset()


@pytest.fixture(scope="session")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("documents")
    return {
        "png": documents.write_png(root / "invoice.png", documents.ENGLISH_PAGES[0]),
        "jpeg": _jpeg(root / "photo.jpg"),
        "image_pdf": documents.write_image_pdf(root / "scan.pdf", documents.ENGLISH_PAGES[:2]),
        "vector_pdf": documents.write_vector_pdf(root / "digital.pdf", documents.ENGLISH_PAGES),
        "tiff": documents.write_tiff(root / "fax.tiff", documents.ENGLISH_PAGES),
        "chinese": documents.write_png(root / "chinese.png", documents.CHINESE_LINES, font_path=documents.cjk_font_path()),
        "encrypted": documents.write_vector_pdf(root / "secret.pdf", documents.ENGLISH_PAGES[:1], password="s3cret"),
    }


def _jpeg(path: Path) -> Path:
    documents.render_page(documents.ENGLISH_PAGES[1]).save(path, format="JPEG", quality=85)
    return path
