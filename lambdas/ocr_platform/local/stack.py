"""The local stack: moto as a server plus our runtimes, wired like the deployed stack, on 127.0.0.1.

``LocalStack`` runs inside one supervisor process (``python -m ocr_platform.local.stack``, started by
``ocr-platform local up`` and kept running until ``local down``):

1. moto's server for S3, SQS, DynamoDB, SNS, CloudWatch, the SageMaker control plane and Application
   Auto Scaling, provisioned from the same ``PlatformConfig`` the CDK app uses (stage ``local``);
2. the Lambda runtime running the real handler modules (invoker, processor, completion, scale-in) with
   the environment the stack gives them (``RuntimeSettings.to_env``);
3. the SQS event sources of the invoker (batches, ReportBatchItemFailures, visibility timeout, moto's
   redrive to the DLQ) and of the DLQ consumer;
4. SNS -> Lambda delivery for the success, error and scale-in topics;
5. the SageMaker async runtime with the real vl-endpoint ``serve`` process;
6. the idle alarm evaluated from the async backlog every ``period_seconds`` (60 s on AWS), publishing
   CloudWatch's alarm message to the scale-in topic, the backlog-without-capacity scale-out, and the
   scheduled scale-in re-check.

Handlers reach all of it through the standard boto3 endpoint variables only. ``LocalOptions.faults``
injects failures where AWS can fail (see ``ocr_platform.local.faults``), for fault campaigns.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

from ocr_platform.jobs import STATUS_INDEX_NAME
from ocr_platform.local.faults import Fault, FaultInjector
from ocr_platform.local.functions import FunctionSpec
from ocr_platform.settings import ENV, RuntimeSettings, engine_fallback_value, metrics_namespace

logger = logging.getLogger(__name__)

REGION = "us-east-1"
ACCOUNT = "123456789012"
STATE_DIR_ENV = "OCR_LOCAL_HOME"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": REGION}


@dataclass(frozen=True)
class LocalOptions:
    """Time scales of the local stack (AWS's values by default; tests shrink them).

    Attributes:
        period_seconds: length of one CloudWatch alarm period (60 on AWS).
        visibility_timeout_seconds: the OCR queue's visibility timeout; ``None`` = the stack's value.
        retry_delays_seconds: waits before Lambda's async retries (60 and 120 s on AWS).
        poll_seconds: how often event sources and runtimes look for work.
        faults: failures to inject (none by default); a function is named by its key (``processor``).
    """

    period_seconds: float = 60.0
    visibility_timeout_seconds: int | None = None
    retry_delays_seconds: tuple[float, ...] = (60.0, 120.0)
    poll_seconds: float = 0.2
    faults: tuple[Fault, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LocalOptions":
        """The options from ``dataclasses.asdict`` output (as ``up`` passes them to the supervisor)."""
        values = dict(data)
        values["retry_delays_seconds"] = tuple(values.get("retry_delays_seconds", cls.retry_delays_seconds))
        values["faults"] = tuple(Fault.from_dict(f) if isinstance(f, dict) else f for f in values.get("faults", ()))
        return cls(**values)


@dataclass
class StackInfo:
    """Where a running local stack listens; written to ``$OCR_LOCAL_HOME/stack.json``."""

    pid: int
    moto_url: str
    lambda_url: str
    sagemaker_url: str
    bucket: str
    queue_url: str
    dlq_url: str
    table: str
    endpoint: str
    started_at: str
    startup_seconds: float = 0.0
    resources: dict[str, str] = field(default_factory=dict)

    def client_environment(self) -> dict[str, str]:
        """Environment for any boto3 program (the CLI, a test) to use this stack."""
        return {
            **CREDENTIALS,
            "AWS_ENDPOINT_URL": self.moto_url,
            "AWS_ENDPOINT_URL_LAMBDA": self.lambda_url,
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": self.sagemaker_url,
            "OCR_BUCKET_NAME": self.bucket,
            "OCR_QUEUE_URL": self.queue_url,
            "OCR_TABLE_NAME": self.table,
        }

    def export_lines(self) -> list[str]:
        """``export NAME=value`` lines for a POSIX shell, so that ``eval "$(ocr-platform local env)"`` points
        any AWS client at this stack: the AWS CLI and boto3 read ``AWS_DEFAULT_REGION``, the AWS SDK for
        JavaScript reads ``AWS_REGION``, and all of them read the ``AWS_ENDPOINT_URL*`` variables."""
        environment = {**self.client_environment(), "AWS_REGION": REGION}
        return [f"export {name}={shlex.quote(value)}" for name, value in sorted(environment.items())]


def create_jobs_table(dynamodb: Any, name: str) -> None:
    """The jobs table as the stack defines it: on-demand, key ``job_id``, the status/time GSI, TTL."""
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("job_id", "status", "created_at")],
        KeySchema=[{"AttributeName": "job_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{
            "IndexName": STATUS_INDEX_NAME,
            "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}, {"AttributeName": "created_at", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})


def state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV, Path.home() / ".ocr-platform" / "local"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _iso_now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class LocalStack:
    """Everything of one local stage, in this process. ``start`` returns where it listens.

    >>> with LocalStack() as info:                                  # doctest: +SKIP
    ...     os.environ.update(info.client_environment())           # then use boto3 / OcrClient as usual
    """

    def __init__(self, config: Any = None, options: LocalOptions | None = None) -> None:
        from ocr_infra.config import PlatformConfig

        # Fallback on: the layout models' weights cannot be had here, so their jobs run a real substitute and
        # carry an engine_fallback warning.
        self.config = config or PlatformConfig(stage="local", engine_fallback=True)
        self.options = options or LocalOptions()
        prefix = f"ocr-{self.config.stage}"
        self.names = {
            "bucket": f"{prefix}-data",
            "table": f"{prefix}-jobs",
            "queue": f"{prefix}-jobs-queue",
            "dlq": f"{prefix}-jobs-dlq",
            "endpoint": self.config.endpoint_name,
            "invoker": f"{prefix}-invoker",
            "processor": f"{prefix}-processor",
            "completion": f"{prefix}-completion",
            "scale_in": f"{prefix}-scale-in",
            "dlq_consumer": f"{prefix}-dlq-consumer",
            "sweeper": f"{prefix}-sweeper",
            "idle_alarm": f"{prefix}-endpoint-idle",
            "capacity_alarm": f"{prefix}-endpoint-backlog-without-capacity",
        }
        self.faults = FaultInjector(self.options.faults, aliases={name: key for key, name in self.names.items()})
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._restore_moto: Any = None
        self._moto: Any = None
        self.lambdas: Any = None
        self.sagemaker: Any = None
        self.info: StackInfo | None = None

    # -- life cycle --------------------------------------------------------------------------------
    def start(self) -> StackInfo:
        from moto.server import ThreadedMotoServer

        from ocr_platform.local.lambda_runtime import LambdaRuntime
        from ocr_platform.local.sagemaker_runtime import SageMakerAsyncRuntime

        started = time.perf_counter()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's per-request access log
        moto_port, lambda_port, sagemaker_port = _free_port(), _free_port(), _free_port()
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port, verbose=False)
        self._moto.start()
        moto_url = f"http://127.0.0.1:{moto_port}"
        lambda_url, sagemaker_url = f"http://127.0.0.1:{lambda_port}", f"http://127.0.0.1:{sagemaker_port}"
        self._aws = {**CREDENTIALS, "AWS_ENDPOINT_URL": moto_url}
        self._clients = {name: self._client(name) for name in ("s3", "sqs", "sns", "dynamodb", "sagemaker", "cloudwatch", "iam", "application-autoscaling")}
        resources = self._provision()
        self._refuse_capacity_updates_on_fault()

        base_env = {
            **self._aws,
            "AWS_ENDPOINT_URL_LAMBDA": lambda_url,
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": sagemaker_url,
            "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO"),
        }
        self.lambdas = LambdaRuntime(
            self._function_specs(resources), base_environment=base_env, port=lambda_port,
            retry_delays_seconds=self.options.retry_delays_seconds, faults=self.faults,
        )
        self.lambdas.start()
        self.sagemaker = SageMakerAsyncRuntime(
            endpoint_name=self.names["endpoint"],
            variant_name=self.config.variant_name,
            output_path=f"s3://{self.names['bucket']}/async/outputs",
            failure_path=f"s3://{self.names['bucket']}/async/failures",
            success_topic_arn=resources["success_topic"],
            error_topic_arn=resources["error_topic"],
            max_concurrent_invocations=self.config.max_concurrent_invocations_per_instance,
            serve_environment={
                **base_env, ENV.BUCKET_NAME: self.names["bucket"],
                ENV.ENGINE_FALLBACK: engine_fallback_value(self.config.engine_fallback),
            },
            s3=self._clients["s3"], sns=self._clients["sns"], sagemaker=self._clients["sagemaker"],
            poll_seconds=self.options.poll_seconds, port=sagemaker_port, faults=self.faults,
        )
        self.sagemaker.start()

        self._spawn(self._sqs_event_source, resources["queue_url"], resources["queue_arn"], self.names["invoker"], self.config.invoker_batch_size, "job-queue")
        self._spawn(self._sqs_event_source, resources["dlq_url"], resources["dlq_arn"], self.names["dlq_consumer"], 10, "dead-letter-queue")
        for topic, function in (("success_topic", "completion"), ("error_topic", "completion"), ("scale_in_topic", "scale_in")):
            self._spawn(self._sns_delivery, resources[f"{topic}_tap"], resources[topic], self.names[function], topic.replace("_", "-"))
        self._spawn(self._alarm_evaluator, resources)

        self.info = StackInfo(
            pid=os.getpid(), moto_url=moto_url, lambda_url=lambda_url, sagemaker_url=sagemaker_url,
            bucket=self.names["bucket"], queue_url=resources["queue_url"], dlq_url=resources["dlq_url"],
            table=self.names["table"], endpoint=self.names["endpoint"], started_at=_iso_now(),
            startup_seconds=round(time.perf_counter() - started, 3), resources=resources,
        )
        return self.info

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        for runtime in (self.sagemaker, self.lambdas):
            if runtime is not None:
                runtime.stop()
        if self._restore_moto is not None:
            self._restore_moto()
        if self._moto is not None:
            self._moto.stop()

    def __enter__(self) -> StackInfo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- resources ---------------------------------------------------------------------------------
    def _client(self, service: str) -> Any:
        return boto3.client(
            service, endpoint_url=self._aws["AWS_ENDPOINT_URL"], region_name=REGION,
            aws_access_key_id="local", aws_secret_access_key="local",
        )

    def _provision(self) -> dict[str, str]:
        """The deployed stack's data resources, with its names' roles and its settings."""
        cfg, names, c = self.config, self.names, self._clients
        out: dict[str, str] = {}
        c["s3"].create_bucket(Bucket=names["bucket"])
        if cfg.versioned_bucket:
            c["s3"].put_bucket_versioning(Bucket=names["bucket"], VersioningConfiguration={"Status": "Enabled"})
        create_jobs_table(c["dynamodb"], names["table"])
        visibility = self.options.visibility_timeout_seconds or cfg.queue_visibility_timeout_seconds
        dlq_attributes = {"MessageRetentionPeriod": str(14 * 24 * 3600)}
        if self.options.visibility_timeout_seconds:
            dlq_attributes["VisibilityTimeout"] = str(self.options.visibility_timeout_seconds)
        out["dlq_url"] = c["sqs"].create_queue(QueueName=names["dlq"], Attributes=dlq_attributes)["QueueUrl"]
        dlq_arn = out["dlq_arn"] = self._queue_arn(out["dlq_url"])
        out["queue_url"] = c["sqs"].create_queue(QueueName=names["queue"], Attributes={
            "VisibilityTimeout": str(visibility),
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(cfg.max_receive_count)}),
        })["QueueUrl"]
        out["queue_arn"] = self._queue_arn(out["queue_url"])
        for topic in ("success", "error", "scale_in"):
            arn = c["sns"].create_topic(Name=f"ocr-{cfg.stage}-{topic.replace('_', '-')}")["TopicArn"]
            tap = c["sqs"].create_queue(QueueName=f"ocr-{cfg.stage}-{topic.replace('_', '-')}-delivery")["QueueUrl"]
            c["sns"].subscribe(TopicArn=arn, Protocol="sqs", Endpoint=self._queue_arn(tap))
            out[f"{topic}_topic"], out[f"{topic}_topic_tap"] = arn, tap

        role = c["iam"].create_role(RoleName=f"ocr-{cfg.stage}-endpoint", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        image = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/ocr-vl-endpoint:local"
        c["sagemaker"].create_model(ModelName=f"{names['endpoint']}-model", ExecutionRoleArn=role, PrimaryContainer={"Image": image})
        c["sagemaker"].create_endpoint_config(
            EndpointConfigName=f"{names['endpoint']}-config",
            # moto's instance-type list predates ml.g5: the variant carries a type moto knows.
            ProductionVariants=[{"VariantName": cfg.variant_name, "ModelName": f"{names['endpoint']}-model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}],
            AsyncInferenceConfig={
                "ClientConfig": {"MaxConcurrentInvocationsPerInstance": cfg.max_concurrent_invocations_per_instance},
                "OutputConfig": {
                    "S3OutputPath": f"s3://{names['bucket']}/async/outputs",
                    "S3FailurePath": f"s3://{names['bucket']}/async/failures",
                    "NotificationConfig": {"SuccessTopic": out["success_topic"], "ErrorTopic": out["error_topic"]},
                },
            },
        )
        c["sagemaker"].create_endpoint(EndpointName=names["endpoint"], EndpointConfigName=f"{names['endpoint']}-config")
        # AWS creates the endpoint with one instance and the idle alarm scales it in; locally it starts idle.
        self._set_desired(0)
        c["application-autoscaling"].register_scalable_target(
            ServiceNamespace="sagemaker", ResourceId=f"endpoint/{names['endpoint']}/variant/{cfg.variant_name}",
            ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=0, MaxCapacity=cfg.max_instance_count,
        )
        c["cloudwatch"].put_metric_alarm(
            AlarmName=names["idle_alarm"], Namespace="AWS/SageMaker", MetricName="ApproximateBacklogSizePerInstance",
            Dimensions=[{"Name": "EndpointName", "Value": names["endpoint"]}], Statistic="Average", Period=60,
            EvaluationPeriods=cfg.idle_minutes, DatapointsToAlarm=cfg.idle_minutes, Threshold=cfg.idle_backlog_threshold,
            ComparisonOperator="LessThanThreshold", TreatMissingData="breaching", AlarmActions=[out["scale_in_topic"]],
        )
        c["cloudwatch"].put_metric_alarm(
            AlarmName=names["capacity_alarm"], Namespace="AWS/SageMaker", MetricName="HasBacklogWithoutCapacity",
            Dimensions=[{"Name": "EndpointName", "Value": names["endpoint"]}], Statistic="Average", Period=60,
            EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanOrEqualToThreshold", TreatMissingData="notBreaching",
        )
        return out

    def _queue_arn(self, url: str) -> str:
        return self._clients["sqs"].get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def _set_desired(self, count: int) -> None:
        self._clients["sagemaker"].update_endpoint_weights_and_capacities(
            EndpointName=self.names["endpoint"],
            DesiredWeightsAndCapacities=[{"VariantName": self.config.variant_name, "DesiredInstanceCount": count}],
        )

    def _refuse_capacity_updates_on_fault(self) -> None:
        """The ``endpoint-capacity`` / ``update-refused`` fault: SageMaker's refusal of a capacity update
        while the endpoint is updating, which moto (applying every update at once) never gives."""
        from moto.sagemaker.exceptions import ValidationError
        from moto.sagemaker.models import sagemaker_backends

        backend = sagemaker_backends[ACCOUNT][REGION]
        apply = backend.update_endpoint_weights_and_capacities

        def update_endpoint_weights_and_capacities(endpoint_name: str, desired_weights_and_capacities: list[dict[str, Any]]) -> str:
            if self.faults.take("endpoint-capacity", "update-refused", endpoint_name) is not None:
                arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{endpoint_name.lower()}"
                raise ValidationError(f'Cannot update in-progress endpoint "{arn}".')
            return apply(endpoint_name=endpoint_name, desired_weights_and_capacities=desired_weights_and_capacities)

        backend.update_endpoint_weights_and_capacities = update_endpoint_weights_and_capacities
        self._restore_moto = lambda: vars(backend).pop("update_endpoint_weights_and_capacities", None)

    def _desired(self) -> int:
        desc = self._clients["sagemaker"].describe_endpoint(EndpointName=self.names["endpoint"])
        variant = next(v for v in desc["ProductionVariants"] if v["VariantName"] == self.config.variant_name)
        return int(variant.get("DesiredInstanceCount", variant.get("CurrentInstanceCount", 0)))

    def _function_specs(self, resources: dict[str, str]) -> list[FunctionSpec]:
        cfg, names = self.config, self.names
        common = {"table_name": names["table"], "bucket_name": names["bucket"], "job_ttl_days": cfg.job_ttl_days}

        def env(service: str, **settings: Any) -> dict[str, str]:
            return {"POWERTOOLS_SERVICE_NAME": service, ENV.METRICS_NAMESPACE: metrics_namespace(cfg.stage),
                    **RuntimeSettings(**common, **settings).to_env()}

        return [
            FunctionSpec(
                names["invoker"], "ocr_platform.handlers.invoker.handler",
                env("ocr-invoker", processor_function=names["processor"], endpoint_name=names["endpoint"],
                    variant_name=cfg.variant_name, max_receive_count=cfg.max_receive_count,
                    invocation_timeout_seconds=cfg.invocation_timeout_seconds),
                timeout_seconds=cfg.invoker_timeout_seconds, memory_mb=cfg.invoker_memory_mb,
            ),
            FunctionSpec(
                names["processor"], "ocr_platform.handlers.processor.handler",
                {**env("ocr-processor"), ENV.ENGINE_FALLBACK: engine_fallback_value(cfg.engine_fallback)},
                timeout_seconds=cfg.processor_timeout_seconds, memory_mb=cfg.processor_memory_mb,
                retry_attempts=cfg.processor_retry_attempts, on_failure=names["completion"],
            ),
            FunctionSpec(
                names["completion"], "ocr_platform.handlers.completion.handler", env("ocr-completion"),
                timeout_seconds=cfg.completion_timeout_seconds, memory_mb=cfg.completion_memory_mb,
            ),
            FunctionSpec(
                names["scale_in"], "ocr_platform.handlers.scale_in.handler",
                env("ocr-scale-in", endpoint_name=names["endpoint"], variant_name=cfg.variant_name,
                    inflight_window_seconds=cfg.inflight_window_seconds, idle_alarm_name=names["idle_alarm"]),
                timeout_seconds=cfg.scale_in_timeout_seconds, memory_mb=cfg.scale_in_memory_mb,
            ),
            FunctionSpec(names["dlq_consumer"], "ocr_platform.handlers.dlq_consumer.handler", env("ocr-dlq-consumer")),
            FunctionSpec(
                names["sweeper"], "ocr_platform.handlers.sweeper.handler",
                env("ocr-sweeper", queued_deadline_seconds=cfg.queued_deadline_seconds,
                    lambda_deadline_seconds=cfg.lambda_deadline_seconds,
                    sagemaker_deadline_seconds=cfg.sagemaker_deadline_seconds),
            ),
        ]

    # -- event sources -----------------------------------------------------------------------------
    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=self._guarded, args=(target, *args), name=target.__name__, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _guarded(self, target: Any, *args: Any) -> None:
        while not self._stop.is_set():
            try:
                target(*args)
                return
            except Exception:  # an event source must outlive a transient failure, as AWS's do
                logger.exception("%s failed; restarting it", target.__name__)
                self._stop.wait(1.0)

    def _sqs_event_source(self, queue_url: str, queue_arn: str, function: str, batch_size: int, target: str) -> None:
        """Lambda's SQS event source mapping: batches, partial batch failures; SQS itself redrives.

        A ``duplicate`` fault on ``target`` delivers a message once more after its batch, as SQS's
        at-least-once delivery may."""
        from ocr_platform.local.events import sqs_event

        sqs = self._client("sqs")
        while not self._stop.is_set():
            messages = sqs.receive_message(
                QueueUrl=queue_url, MaxNumberOfMessages=batch_size, WaitTimeSeconds=1,
                AttributeNames=["All"], MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                continue
            result = self.lambdas.invoke(function, sqs_event(messages, queue_arn))
            if result.error is not None:
                continue  # a function error returns the whole batch after the visibility timeout
            failed = {f.get("itemIdentifier") for f in (result.payload or {}).get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            duplicates = [m for m in messages if self.faults.take(target, "duplicate", m["Body"]) is not None]
            if duplicates:
                self.lambdas.invoke(function, sqs_event(duplicates, queue_arn))

    def _sns_delivery(self, tap_url: str, topic_arn: str, function: str, target: str) -> None:
        """SNS -> Lambda: each notification invokes the subscribed function asynchronously (twice under a
        ``duplicate`` fault on ``target``, as SNS's at-least-once delivery may)."""
        from ocr_platform.local.events import sns_event

        sqs = self._client("sqs")
        while not self._stop.is_set():
            for message in sqs.receive_message(QueueUrl=tap_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
                envelope = json.loads(message["Body"])
                event = sns_event([envelope], f"{topic_arn}:local")
                self.lambdas.invoke_async(function, event)
                if self.faults.take(target, "duplicate", envelope.get("Message", "")) is not None:
                    self.lambdas.invoke_async(function, event)
                sqs.delete_message(QueueUrl=tap_url, ReceiptHandle=message["ReceiptHandle"])

    def _alarm_evaluator(self, resources: dict[str, str]) -> None:
        """CloudWatch and EventBridge for the endpoint, one period at a time.

        - the idle alarm: ApproximateBacklogSizePerInstance (the period's average of the async backlog
          over the desired instances; missing at 0 instances = breaching) below the threshold for
          ``idle_minutes`` periods -> CloudWatch's alarm message on the scale-in topic;
        - HasBacklogWithoutCapacity >= 1 -> the step scaling policy's scale-out to 1 instance;
        - the scale-in re-check rule: every ``idle_minutes`` periods a scheduled event to the scale-in
          function, which acts while the idle alarm is still in ALARM;
        - the sweeper rule: every ``sweeper_interval_minutes`` periods a scheduled event to the sweeper.
        """
        import uuid

        from ocr_platform.local.events import cloudwatch_alarm_message, scheduled_event

        cfg, sns, cloudwatch = self.config, self._client("sns"), self._client("cloudwatch")
        window: list[float | None] = []
        state, periods = "OK", 0
        rule_arn = f"arn:aws:events:{REGION}:{ACCOUNT}:rule/ocr-{cfg.stage}-scale-in-recheck"
        sweeper_rule_arn = f"arn:aws:events:{REGION}:{ACCOUNT}:rule/ocr-{cfg.stage}-sweeper"
        while not self._stop.is_set():
            samples, period_end = [], time.monotonic() + self.options.period_seconds
            while time.monotonic() < period_end and not self._stop.is_set():
                samples.append(self.sagemaker.backlog())
                self._stop.wait(min(self.options.poll_seconds, max(0.0, period_end - time.monotonic())))
            if self._stop.is_set():
                return
            backlog, desired = sum(samples) / max(1, len(samples)), self._desired()
            if desired == 0 and backlog > 0:
                logger.info("HasBacklogWithoutCapacity: scaling %s out to 1", self.names["endpoint"])
                try:
                    self._set_desired(1)
                except ClientError as err:  # the alarm stays in ALARM: tried again next period
                    logger.warning("Scale-out refused: %s", err)
            window = (window + [backlog / desired if desired else None])[-cfg.idle_minutes:]
            idle = len(window) == cfg.idle_minutes and all(v is None or v < cfg.idle_backlog_threshold for v in window)
            new_state = "ALARM" if idle else "OK"
            periods += 1
            if periods % cfg.idle_minutes == 0:
                self.lambdas.invoke_async(self.names["scale_in"], scheduled_event(rule_arn, _iso_now(), event_id=str(uuid.uuid4())))
            if periods % cfg.sweeper_interval_minutes == 0:
                self.lambdas.invoke_async(self.names["sweeper"], scheduled_event(sweeper_rule_arn, _iso_now(), event_id=str(uuid.uuid4())))
            if new_state == state:
                continue
            reason = (f"Threshold Crossed: {cfg.idle_minutes} datapoints were less than the threshold "
                      f"({cfg.idle_backlog_threshold}) or missing." if idle else "Threshold Crossed: backlog above the threshold.")
            cloudwatch.set_alarm_state(AlarmName=self.names["idle_alarm"], StateValue=new_state, StateReason=reason)
            if new_state == "ALARM":
                alarm = cloudwatch.describe_alarms(AlarmNames=[self.names["idle_alarm"]])["MetricAlarms"][0]
                sns.publish(TopicArn=resources["scale_in_topic"], Message=cloudwatch_alarm_message(
                    alarm_name=alarm["AlarmName"], alarm_arn=alarm["AlarmArn"], new_state="ALARM", old_state=state,
                    reason=reason, metric_name=alarm["MetricName"], namespace=alarm["Namespace"],
                    dimensions={"EndpointName": self.names["endpoint"]}, period=60,
                    evaluation_periods=cfg.idle_minutes, comparison_operator="LessThanThreshold",
                    threshold=cfg.idle_backlog_threshold, treat_missing_data="breaching", state_change_time=_iso_now(),
                ))
            state = new_state

# -- the supervisor process and its control ------------------------------------------------------------

def _state_file() -> Path:
    return state_dir() / "stack.json"


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs. A supervisor this process started (``up`` in a test, say) stays a
    zombie after it exits until it is reaped, and a zombie still answers ``kill(pid, 0)``: reap it here."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: init reaps it, so it is alive
        return True
    return reaped == 0


def running_stack() -> StackInfo | None:
    """The running local stack, if its supervisor is alive and moto answers."""
    path = _state_file()
    if not path.is_file():
        return None
    try:
        info = StackInfo(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    if not _alive(info.pid):
        return None
    try:
        import urllib.request

        urllib.request.urlopen(f"{info.moto_url}/moto-api/", timeout=2).close()
    except OSError:
        return None
    return info


def up(*, timeout: float = 120.0, options: LocalOptions | None = None) -> tuple[StackInfo, bool]:
    """Start the local stack in a background process unless one runs; returns ``(info, started_now)``."""
    info = running_stack()
    if info is not None:
        return info, False
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    _state_file().unlink(missing_ok=True)
    command = [sys.executable, "-m", "ocr_platform.local.stack"]
    if options is not None:
        command += ["--options", json.dumps(asdict(options))]
    log = (directory / "stack.log").open("ab")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The local stack exited during start-up (code {process.returncode}); see {directory / 'stack.log'}.")
        info = running_stack()
        if info is not None:
            return info, True
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGTERM)
    raise TimeoutError(f"The local stack did not start within {timeout:.0f} s; see {directory / 'stack.log'}.")


def down(*, timeout: float = 30.0) -> bool:
    """Stop the running local stack and every process it started; False when none was running."""
    path = _state_file()
    if not path.is_file():
        return False
    try:
        pid = json.loads(path.read_text())["pid"]
    except (ValueError, KeyError):
        path.unlink(missing_ok=True)
        return False
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    path.unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> None:
    """The supervisor: run the stack until SIGTERM or SIGINT, then stop everything it started."""
    import argparse

    parser = argparse.ArgumentParser(description="Run the OCR platform's local stack in the foreground.")
    parser.add_argument("--options", help="LocalOptions as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    options = LocalOptions.from_dict(json.loads(args.options)) if args.options else LocalOptions()
    stack = LocalStack(options=options)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    info = stack.start()
    path = _state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(info), indent=2))
    logger.info("Local stack up in %.2f s: moto %s, lambda %s, sagemaker %s", info.startup_seconds, info.moto_url, info.lambda_url, info.sagemaker_url)
    try:
        stopping.wait()
    finally:
        logger.info("Stopping the local stack")
        stack.stop()
        if path.is_file() and json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


if __name__ == "__main__":
    main()
