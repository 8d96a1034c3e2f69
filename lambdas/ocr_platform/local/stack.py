"""The local stack: moto as a server plus our runtimes, wired like the deployed stack, on 127.0.0.1.

``LocalStack`` is the recipe that puts the pieces together; each piece lives in a module of its own:

1. moto's server for S3, SQS, DynamoDB, SNS, CloudWatch, EventBridge, Secrets Manager, the SageMaker
   control plane and Application Auto Scaling, provisioned from the same ``PlatformConfig`` the CDK app uses, stage ``local``
   (``provisioning``, ``endpoint_capacity``), with its DynamoDB item writes made atomic as DynamoDB's are
   (``moto_consistency``: moto checks a condition and writes without a lock), SQS's message size counted in
   bytes as SQS counts it (``sqs_limits``), and the SageMaker control plane's ``Creating``/``Updating`` states,
   ``UpdateEndpoint`` and instance quota (``sagemaker_control``);
2. the Lambda runtime running the real handler modules (invoker, processor, completion, scale-in, DLQ
   consumer, sweeper) with the environment the stack gives them (``lambda_runtime``, ``function_specs``);
3. the SQS event sources of the invoker (batches, ReportBatchItemFailures, visibility timeout, moto's
   redrive to the DLQ), of the DLQ consumer and of the webhook deliverer, and SNS -> Lambda delivery for the success, error and
   scale-in topics (``event_sources``); what an async hand-over cannot complete (a function's last
   failed retry, an SNS delivery the Lambda service refused) is parked on the parked-events queue;
4. the SageMaker async runtime with the real vl-endpoint ``serve`` process (``sagemaker_runtime``);
5. the idle alarm evaluated from the async backlog every ``period_seconds`` (60 s on AWS), publishing
   CloudWatch's alarm message to the scale-in topic, the backlog-without-capacity scale-out, and the
   scheduled scale-in re-check and sweeper (``alarms``).

It runs in the ``supervisor`` process (``ocr-platform local up``) or in a test's own process. Handlers
reach it only through the standard boto3 endpoint variables. ``LocalOptions.faults`` injects failures
where AWS can fail (``ocr_platform.local.faults``), for fault campaigns.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV, engine_fallback_value
from ocr_platform.local.alarms import EndpointAlarms
from ocr_platform.local.console_server import ConsoleServer
from ocr_platform.local.endpoint_capacity import refuse_capacity_updates_on_fault
from ocr_platform.local.event_sources import EventSources
from ocr_platform.local.events import iso_millis
from ocr_platform.local.faults import Fault, FaultInjector
from ocr_platform.local.function_specs import function_specs
from ocr_platform.local.http_api import JwtAuthorizer, LocalHttpApi, moto_signing_keys
from ocr_platform.local.moto_account import CREDENTIALS, REGION, moto_client
from ocr_platform.local.moto_consistency import serialize_item_operations
from ocr_platform.local.provisioning import SERVICES, provision, resource_names
from ocr_platform.local.s3_post_policy import moto_server_with_post_policies
from ocr_platform.local.sagemaker_control import DEFAULT_INSTANCE_QUOTA, DEFAULT_TRANSITION_SECONDS, install_sagemaker_control
from ocr_platform.local.sqs_limits import enforce_sqs_message_size

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalOptions:
    """Time scales of the local stack (AWS's values by default; tests shrink them).

    Attributes:
        period_seconds: length of one CloudWatch alarm period (60 on AWS).
        visibility_timeout_seconds: the OCR queue's visibility timeout; ``None`` = the stack's value.
        retry_delays_seconds: waits before Lambda's async retries (60 and 120 s on AWS).
        poll_seconds: how often event sources and runtimes look for work.
        faults: failures to inject (none by default); a function is named by its key (``processor``).
        processor_timeout_seconds: the processor's timeout; ``None`` = the stack's value. A campaign shrinks
            it with its other time scales (a scaled timeout is not a deployable config: ``PlatformConfig``
            checks the stack's value against the worst case of a chunk).
        processor_concurrency: execution environments of the processor; ``None`` = one per core
            (``function_specs.default_processor_concurrency``). Benchmarks set it to compare worker counts.
        webhook_retry_seconds: the webhook retry schedule as (first wait, longest wait, window) in seconds;
            ``None`` = the stack's (30 s, 1 h, 24 h). Tests shrink it to see a delivery dead-lettered.
        admission_retry_seconds: how long a job that found every processor slot taken waits in the queue before
            the next try; ``None`` = the stack's (20 s, ``defaults.ADMISSION_RETRY_SECONDS``).
        endpoint_transition_seconds: how long an endpoint stays ``Creating`` after CreateEndpoint and ``Updating``
            after UpdateEndpoint (minutes on AWS); ``local up`` waits for the stage's endpoint, as a deployment does.
        endpoint_instance_quota: endpoint instances the local account may run at once, both fleets of a
            blue/green update included (AWS's per-type "for endpoint usage" quota; a new account's is small).
    """

    period_seconds: float = 60.0
    visibility_timeout_seconds: int | None = None
    processor_timeout_seconds: int | None = None
    processor_concurrency: int | None = None
    webhook_retry_seconds: tuple[int, int, int] | None = None
    admission_retry_seconds: int | None = None
    retry_delays_seconds: tuple[float, ...] = (60.0, 120.0)
    poll_seconds: float = 0.2
    faults: tuple[Fault, ...] = ()
    endpoint_transition_seconds: float = DEFAULT_TRANSITION_SECONDS
    endpoint_instance_quota: int = DEFAULT_INSTANCE_QUOTA

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LocalOptions:
        """The options from ``dataclasses.asdict`` output (as ``up`` passes them to the supervisor)."""
        values = dict(data)
        values["retry_delays_seconds"] = tuple(values.get("retry_delays_seconds", cls.retry_delays_seconds))
        values["faults"] = tuple(Fault.from_dict(f) if isinstance(f, dict) else f for f in values.get("faults", ()))
        if values.get("webhook_retry_seconds") is not None:
            first, longest, window = values["webhook_retry_seconds"]
            values["webhook_retry_seconds"] = (int(first), int(longest), int(window))
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
    api_url: str = ""
    user_pool_id: str = ""
    user_pool_client_id: str = ""
    console_url: str = ""
    console_user: str = ""
    #: The console user's temporary password: they are invited (FORCE_CHANGE_PASSWORD), so their first sign-in
    #: asks for a new password (Cognito's NEW_PASSWORD_REQUIRED challenge), as it asks any invited user.
    console_password: str = ""

    def console_sign_in(self) -> str:
        """How to sign in to the console, for ``local up`` and ``local status`` to print."""
        if not self.console_url:
            return ""
        return (f"console: {self.console_url} (sign in as {self.console_user}; until you have chosen a password of "
                f"your own, with the temporary password {self.console_password}: the first sign-in asks you to choose "
                "one, and each start of the stack invites the user afresh)")

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
            "OCR_API_URL": self.api_url,
            "OCR_USER_POOL_ID": self.user_pool_id,
            "OCR_USER_POOL_CLIENT_ID": self.user_pool_client_id,
            "OCR_CONSOLE_URL": self.console_url,
            "OCR_WEBHOOK_SECRET_ARN": self.resources.get("webhook_secret_arn", ""),
            "OCR_JOB_EVENTS_URL": self.resources.get("job_events_url", ""),
        }

    def export_lines(self) -> list[str]:
        """``export NAME=value`` lines for a POSIX shell, so that ``eval "$(ocr-platform local env)"`` points
        any AWS client at this stack: the AWS CLI and boto3 read ``AWS_DEFAULT_REGION``, the AWS SDK for
        JavaScript reads ``AWS_REGION``, and all of them read the ``AWS_ENDPOINT_URL*`` variables."""
        environment = {**self.client_environment(), "AWS_REGION": REGION}
        return [f"export {name}={shlex.quote(value)}" for name, value in sorted(environment.items())]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalStack:
    """Everything of one local stage, in this process. ``start`` returns where it listens.

    Attributes (read them, don't replace them): ``config``, ``options``, ``names`` (resource names by
    role), ``faults`` (the injector, with its counts), and once started ``lambdas`` (the Lambda runtime),
    ``sagemaker`` (the SageMaker async runtime) and ``info``.

    >>> with LocalStack() as info:                                  # doctest: +SKIP
    ...     os.environ.update(info.client_environment())           # then use boto3 / OcrClient as usual
    """

    def __init__(self, config: Any = None, options: LocalOptions | None = None) -> None:
        from ocr_infra.config import PlatformConfig

        # Fallback on: the layout models' weights cannot be had here, so their jobs run a real substitute and
        # carry an engine_fallback warning.
        self.config = config or PlatformConfig(stage="local", engine_fallback=True)
        self.options = options or LocalOptions()
        self.names = resource_names(self.config)
        self.faults = FaultInjector(self.options.faults, aliases={name: key for key, name in self.names.items()})
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._restore_moto: list[Callable[[], None]] = []
        self._restore_dynamodb: Callable[[], None] | None = None
        self._moto: Any = None
        self.lambdas: Any = None
        self.sagemaker: Any = None
        self.http_api: LocalHttpApi | None = None
        self.console: ConsoleServer | None = None
        self.info: StackInfo | None = None

    def start(self) -> StackInfo:

        from ocr_platform.local.lambda_runtime import LambdaRuntime
        from ocr_platform.local.sagemaker_runtime import SageMakerAsyncRuntime

        started = time.perf_counter()
        cfg, names, options = self.config, self.names, self.options
        # 1. moto as a server, provisioned like the deployed stack; conditional writes atomic; capacity
        #    updates refusable by a fault.
        self._restore_dynamodb = serialize_item_operations()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's per-request access log
        moto_port, lambda_port, sagemaker_port, api_port, console_port = (_free_port() for _ in range(5))
        # The console's origin, which the jobs API answers cross-origin requests from (as the deployed API
        # answers its distribution's).
        console_origin = f"http://127.0.0.1:{console_port}"
        api_cfg = replace(cfg, console_origins=(*cfg.console_origins, console_origin))
        # S3 refuses a browser upload that strays from its signed policy; moto does not, so the stack does.
        self._moto = moto_server_with_post_policies(
            "127.0.0.1", moto_port, secrets={CREDENTIALS["AWS_ACCESS_KEY_ID"]: CREDENTIALS["AWS_SECRET_ACCESS_KEY"]}
        )
        self._moto.start()
        moto_url = f"http://127.0.0.1:{moto_port}"
        lambda_url, sagemaker_url = f"http://127.0.0.1:{lambda_port}", f"http://127.0.0.1:{sagemaker_port}"
        clients = {service: moto_client(service, moto_url) for service in SERVICES}
        # moto counts SQS sizes in characters and creates endpoints InService at once; AWS does neither.
        self._restore_moto.append(enforce_sqs_message_size())
        self._restore_moto.append(install_sagemaker_control(
            transition_seconds=options.endpoint_transition_seconds, instance_quota=options.endpoint_instance_quota))
        resources = provision(clients, cfg, names, visibility_timeout_seconds=options.visibility_timeout_seconds)
        self._restore_moto.append(refuse_capacity_updates_on_fault(self.faults))

        # 2. The Lambda runtime with the real handlers, which find every service by its endpoint variable.
        base_env = {
            **CREDENTIALS, "AWS_ENDPOINT_URL": moto_url,
            "AWS_ENDPOINT_URL_LAMBDA": lambda_url,
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": sagemaker_url,
            "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO"),
        }
        self.lambdas = LambdaRuntime(
            function_specs(api_cfg, names, processor_timeout_seconds=options.processor_timeout_seconds,
                           processor_concurrency=options.processor_concurrency, resources=resources,
                           webhook_retry_seconds=options.webhook_retry_seconds,
                           admission_retry_seconds=options.admission_retry_seconds),
            base_environment=base_env, port=lambda_port,
            retry_delays_seconds=options.retry_delays_seconds, faults=self.faults, sqs=moto_client("sqs", moto_url),
        )
        self.lambdas.start()

        # 3. The SageMaker async runtime, writing to the endpoint's output paths and notifying its topics.
        self.sagemaker = SageMakerAsyncRuntime(
            endpoint_name=names["endpoint"],
            variant_name=cfg.variant_name,
            output_path=f"s3://{names['bucket']}/async/outputs",
            failure_path=f"s3://{names['bucket']}/async/failures",
            success_topic_arn=resources["success_topic"],
            error_topic_arn=resources["error_topic"],
            max_concurrent_invocations=cfg.max_concurrent_invocations_per_instance,
            serve_environment={
                **base_env, ENV.BUCKET_NAME: names["bucket"],
                ENV.ENGINE_FALLBACK: engine_fallback_value(cfg.engine_fallback),
                ENV.MAX_PAGES: str(cfg.max_pages), ENV.GPU_PAGES_PER_CHUNK: str(cfg.gpu_pages_per_chunk),
                ENV.VL_VERSION: cfg.endpoint_vl_version,
            },
            s3=clients["s3"], sns=clients["sns"], sagemaker=clients["sagemaker"],
            poll_seconds=options.poll_seconds, port=sagemaker_port, faults=self.faults,
        )
        self.sagemaker.start()

        # 4. Event sources, SNS delivery and the alarms, each in a thread that outlives its failures.
        sources = EventSources(moto_url=moto_url, lambdas=self.lambdas, faults=self.faults, stop=self._stop,
                               parked_events_url=resources["parked_events_url"])
        self._spawn("sqs-job-queue", sources.sqs_event_source,
                    resources["queue_url"], resources["queue_arn"], names["invoker"], cfg.invoker_batch_size, "job-queue")
        self._spawn("sqs-dead-letter-queue", sources.sqs_event_source,
                    resources["dlq_url"], resources["dlq_arn"], names["dlq_consumer"], 10, "dead-letter-queue")
        for topic, function in (("success_topic", "completion"), ("error_topic", "completion"), ("scale_in_topic", "scale_in")):
            target = topic.replace("_", "-")
            self._spawn(f"sns-{target}", sources.sns_delivery, resources[f"{topic}_tap"], resources[topic], names[function], target)
        self._spawn("sqs-webhook-queue", sources.sqs_event_source, resources["webhook_queue_url"],
                    resources["webhook_queue_arn"], names["webhooks"], defaults.WEBHOOK_BATCH_SIZE, "webhook-queue")
        self._spawn("eventbridge-inbox", sources.s3_eventbridge_delivery, resources["inbox_events_tap"], names["ingest"], "inbox-events")
        alarms = EndpointAlarms(
            config=cfg, names=names, scale_in_topic=resources["scale_in_topic"],
            period_seconds=options.period_seconds, poll_seconds=options.poll_seconds,
            backlog=self.sagemaker.backlog, sagemaker=clients["sagemaker"], lambdas=self.lambdas,
            moto_url=moto_url, stop=self._stop,
        )
        self._spawn("endpoint-alarms", alarms.run)

        # 5. The jobs API: API Gateway's HTTP API and JWT authorizer in front of the API function.
        self.http_api = LocalHttpApi(
            lambdas=self.lambdas, function=names["api"], port=api_port, cors_origins=api_cfg.console_origins,
            authorizer=JwtAuthorizer(
                issuer=f"https://cognito-idp.{REGION}.amazonaws.com/{resources['user_pool_id']}",
                audience=(resources["user_pool_client_id"],), keys=moto_signing_keys(),
            ),
        )
        api_url = self.http_api.start()
        self.console = ConsoleServer(console_port, {
            "apiUrl": api_url, "cognitoUrl": moto_url + "/", "userPoolClientId": resources["user_pool_client_id"],
            "passwordPolicy": json.loads(resources["password_policy"]),  # the rules the new-password step shows
        })
        console_url = self.console.start()

        # 6. Where it all listens.
        self.info = StackInfo(
            pid=os.getpid(), moto_url=moto_url, lambda_url=lambda_url, sagemaker_url=sagemaker_url,
            bucket=names["bucket"], queue_url=resources["queue_url"], dlq_url=resources["dlq_url"],
            table=names["table"], endpoint=names["endpoint"], started_at=iso_millis(),
            startup_seconds=round(time.perf_counter() - started, 3), resources=resources, api_url=api_url,
            user_pool_id=resources["user_pool_id"], user_pool_client_id=resources["user_pool_client_id"],
            console_url=console_url, console_user=resources["console_user"], console_password=resources["console_password"],
        )
        return self.info

    def stop(self) -> None:
        self._stop.set()
        for server in (self.http_api, self.console):
            if server is not None:
                server.stop()
        for thread in self._threads:
            thread.join(timeout=5)
        for runtime in (self.sagemaker, self.lambdas):
            if runtime is not None:
                runtime.stop()
        while self._restore_moto:
            self._restore_moto.pop()()
        if self._moto is not None:
            self._moto.stop()
        if self._restore_dynamodb is not None:
            self._restore_dynamodb()

    def __enter__(self) -> StackInfo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=self._guarded, args=(name, target, *args), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _guarded(self, name: str, target: Callable[..., None], *args: Any) -> None:
        while not self._stop.is_set():
            try:
                target(*args)
                return
            except Exception:  # an event source must outlive a transient failure, as AWS's do
                logger.exception("%s failed; restarting it", name)
                self._stop.wait(1.0)
