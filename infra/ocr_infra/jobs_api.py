"""The jobs API for browsers: a Cognito user pool, an HTTP API whose every route needs its JWT, and the Lambda
behind it (``ocr_platform.handlers.api``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.platform_function import API_HANDLER, CommonFunctionProps, PlatformFunction, PlatformFunctionProps
from ocr_infra.secure_defaults import acknowledge, allow, removal_policy, secure_log_group
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import OUTPUT_FILES, RESULTS_PREFIX, UPLOADS_PREFIX
from ocr_platform.core.settings import ENV
from ocr_platform.inputs.jobs_api import ROUTES

#: One JSON line per request in the access log: who, what, how it ended, and the authorizer's verdict.
ACCESS_LOG_FORMAT = (
    '{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","time":"$context.requestTime",'
    '"method":"$context.httpMethod","route":"$context.routeKey","status":"$context.status",'
    '"latencyMs":"$context.responseLatency","sub":"$context.authorizer.claims.sub","error":"$context.authorizer.error"}'
)


@dataclass(frozen=True)
class JobsApiProps:
    """Props of :class:`JobsApi`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention).
        owner_index_arn: the owner/time GSI the API lists a user's jobs through.
        queue: the job queue: a job submitted by URL (``POST /jobs`` with ``url``, no upload) has its message
            sent by the API itself (``OCR_QUEUE_URL``).
        inline_result_max_bytes: ``OCR_INLINE_RESULT_MAX_BYTES``: a ``result.json`` up to this size comes inline
            in the answer, a larger one by presigned URL only (1 MiB).
        retain: keep the user pool when the stack is deleted (the stage's ``retain_data``).
        console_origins: browser origins allowed to call the API (CORS); none: no cross-origin answers.
        throttle_rate / throttle_burst: the default stage's request rate limit (per second) and burst.
        memory_mb / timeout_seconds: 256 MB, 10 s (each route is a few DynamoDB and S3 calls).
    """

    common: CommonFunctionProps
    owner_index_arn: str
    queue: sqs.IQueue
    inline_result_max_bytes: int = defaults.INLINE_RESULT_MAX_BYTES
    retain: bool = defaults.RETAIN_DATA
    console_origins: Sequence[str] = ()
    throttle_rate: int = defaults.API_THROTTLE_RATE
    throttle_burst: int = defaults.API_THROTTLE_BURST
    memory_mb: int = defaults.API_MEMORY_MB
    timeout_seconds: int = defaults.API_TIMEOUT_SECONDS


class JobsApi(Construct):
    """``POST /jobs``, ``GET /jobs``, ``GET /jobs/{job_id}``, ``GET /jobs/{job_id}/result``, for signed-in users.

    Users are invited by an administrator (no self sign-up) and sign in with their e-mail address; the
    console's app client is public (a browser keeps no secret) and gets ID tokens valid for an hour, which
    the API's JWT authorizer checks (issuer: the pool; audience: the client) before the function runs.
    """

    def __init__(self, scope: Construct, construct_id: str, props: JobsApiProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        # 1. User pool: invited users only, e-mail sign-in, a strong password, TOTP MFA available.
        self._user_pool = cognito.UserPool(
            self,
            "Users",
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(email=True),
            password_policy=cognito.PasswordPolicy(
                min_length=12, require_lowercase=True, require_uppercase=True, require_digits=True, require_symbols=True,
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            removal_policy=removal_policy(props.retain),
        )
        acknowledge(self._user_pool, "AwsSolutions-COG2", "MFA is optional: invited users enroll a TOTP app when they "
                    "choose; a stage that must require it sets mfa=REQUIRED (the console's sign-in then asks for the code).")
        for rule in ("AwsSolutions-COG3", "AwsSolutions-COG8"):
            acknowledge(self._user_pool, rule, "Cognito's threat protection needs the Plus feature plan, billed per "
                        "active user; the pool has no self sign-up, so only invited users can sign in at all.")
        # 2. App client for the console: public, short-lived tokens, and only the flows the console calls
        #    (console/app.js: InitiateAuth USER_PASSWORD_AUTH and REFRESH_TOKEN_AUTH, which Cognito always allows). No
        #    SRP and no OAuth: the CDK's default OAuth settings (code and implicit grants, an https://example.com
        #    callback) would only widen what the client accepts.
        self._client = self._user_pool.add_client(
            "Console",
            generate_secret=False,
            auth_flows=cognito.AuthFlow(user_password=True),
            disable_o_auth=True,
            id_token_validity=Duration.hours(1),
            access_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(1),
            prevent_user_existence_errors=True,
        )
        # 3. Function: the API's routes over the job store and the bucket.
        self._fn = PlatformFunction(
            self,
            "Handler",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform jobs API: create, list and read the caller's jobs",
                handler=API_HANDLER,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-api",
                environment={
                    ENV.CONSOLE_ORIGINS: ",".join(props.console_origins),
                    ENV.QUEUE_URL: props.queue.queue_url,
                    ENV.INLINE_RESULT_MAX_BYTES: str(props.inline_result_max_bytes),
                },
                concurrency_bound=(
                    f"Bounded by the HTTP API stage's throttling ({props.throttle_rate} requests a second, bursts of "
                    f"{props.throttle_burst}) in front of it; each route is a few DynamoDB and S3 calls within its "
                    f"{props.timeout_seconds} s timeout, so that rate needs few executions."
                ),
                failed_events=(
                    "Invoked synchronously by the HTTP API, which a function DLQ does not apply to (Lambda uses "
                    "DeadLetterConfig only for asynchronous invocations): a failed request is answered with an error "
                    "status to its caller, who may retry it; no event is left behind."
                ),
            ),
        )
        role = self._fn.role
        # 4. Permissions: the caller's items and the owner index; a URL job's message; presigned uploads and result
        #    links are signed with this role, so it holds exactly what they allow; small results are read inline.
        allow(role, ["dynamodb:GetItem", "dynamodb:PutItem"], [table.table_arn])
        allow(role, ["dynamodb:Query"], [props.owner_index_arn])
        allow(role, ["sqs:SendMessage"], [props.queue.queue_arn])
        allow(
            role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{UPLOADS_PREFIX}*")],
            reason="Key-prefix scope: each presigned POST is for uploads/{job_id}/{file} of a job created at run time; "
            "its signed policy fixes the exact key, type and size.",
        )
        allow(
            role,
            ["s3:GetObject"],
            [bucket.arn_for_objects(f"{RESULTS_PREFIX}*")],
            reason="Key-prefix scope: the result links are presigned GETs of results/{job_id}/result.json and its page "
            "images, of the caller's job; a small result.json is read and returned inline.",
        )
        allow(role, ["s3:ListBucket"], [bucket.bucket_arn], conditions={"StringLike": {"s3:prefix": [f"{RESULTS_PREFIX}*"]}})
        allow(
            role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{RESULTS_PREFIX}*/{name}") for fmt, name in OUTPUT_FILES.items() if fmt != "pdf"],
            reason="Key-prefix scope: GET /jobs/{job_id}/result?format= stores the caller's result in that format "
            "(results/{job_id}/result.hocr, result.alto.xml, textract.json), made from its result.json; nothing else.",
        )
        # 5. HTTP API: the JWT authorizer on every route, CORS for the console only, access logs, throttling.
        authorizer = authorizers.HttpJwtAuthorizer(
            "CognitoJwt",
            jwt_issuer=f"https://cognito-idp.{self._user_pool.stack.region}.amazonaws.com/{self._user_pool.user_pool_id}",
            jwt_audience=[self._client.user_pool_client_id],
        )
        cors = None
        if props.console_origins:
            cors = apigw.CorsPreflightOptions(
                allow_origins=list(props.console_origins),
                allow_methods=[apigw.CorsHttpMethod.GET, apigw.CorsHttpMethod.POST],
                allow_headers=["authorization", "content-type"],
                max_age=Duration.minutes(10),
            )
        self._api = apigw.HttpApi(
            self, "Api", description="OCR platform jobs API", default_authorizer=authorizer, cors_preflight=cors,
        )
        integration = integrations.HttpLambdaIntegration("Jobs", self._fn.function)
        for route in ROUTES:
            method, path = route.split(" ", 1)
            self._api.add_routes(path=path, methods=[apigw.HttpMethod(method)], integration=integration)
        self._access_logs = secure_log_group(
            self, "AccessLogs", retention=props.common.log_retention, encryption_key=props.common.encryption_key
        )
        stage = self._api.default_stage
        assert stage is not None
        cfn_stage = stage.node.default_child
        assert isinstance(cfn_stage, apigw.CfnStage)
        cfn_stage.access_log_settings = apigw.CfnStage.AccessLogSettingsProperty(
            destination_arn=self._access_logs.log_group_arn, format=ACCESS_LOG_FORMAT
        )
        cfn_stage.default_route_settings = apigw.CfnStage.RouteSettingsProperty(
            throttling_rate_limit=props.throttle_rate, throttling_burst_limit=props.throttle_burst
        )

    @property
    def user_pool(self) -> cognito.UserPool:
        return self._user_pool

    @property
    def user_pool_client(self) -> cognito.UserPoolClient:
        return self._client

    @property
    def api(self) -> apigw.HttpApi:
        return self._api

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment
