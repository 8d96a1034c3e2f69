"""The jobs API as synthesized: every route behind the user pool's JWT, the function's least privilege, CORS
only for the console, access logs and throttling on the stage, and the outputs a frontend reads."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Template

from ocr_infra.config import PlatformConfig
from ocr_infra.stack import OcrPlatformStack
from ocr_platform.core.settings import ENV
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import grants, tracing_grants
from tests.infra.test_config import _app


def _of_type(resources: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in resources.values() if r["Type"] == kind]


def test_every_route_needs_a_token_from_the_platforms_user_pool(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    jobs_api = synthesis.stack.jobs_api
    routes = _of_type(resources, "AWS::ApiGatewayV2::Route")
    assert sorted(route["RouteKey"] for route in routes) == ["GET /jobs", "GET /jobs/{job_id}", "GET /jobs/{job_id}/result", "POST /jobs"]
    [authorizer] = _of_type(resources, "AWS::ApiGatewayV2::Authorizer")
    assert {route["AuthorizationType"] for route in routes} == {"JWT"}
    assert authorizer["AuthorizerType"] == "JWT"
    assert authorizer["IdentitySource"] == ["$request.header.Authorization"]
    pool, client = synthesis.logical_id(jobs_api.user_pool), synthesis.logical_id(jobs_api.user_pool_client)
    assert authorizer["JwtConfiguration"]["Audience"] == [{"Ref": client}]
    issuer = authorizer["JwtConfiguration"]["Issuer"]["Fn::Join"][1]
    assert issuer[0] == "https://cognito-idp." and {"Ref": pool} in issuer


def test_the_user_pool_admits_invited_users_with_strong_passwords(synthesis: Synthesis) -> None:
    pool = synthesis.resource(synthesis.stack.jobs_api.user_pool)["Properties"]
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    assert pool["UsernameAttributes"] == ["email"]
    assert pool["Policies"]["PasswordPolicy"]["MinimumLength"] == 12
    assert pool["MfaConfiguration"] == "OPTIONAL"
    client = synthesis.resource(synthesis.stack.jobs_api.user_pool_client)["Properties"]
    assert client["GenerateSecret"] is False and client["PreventUserExistenceErrors"] == "ENABLED"


def test_the_api_function_may_read_the_table_and_index_queue_url_jobs_and_sign_only_uploads_and_result_links(
    synthesis: Synthesis, resources: dict[str, Any]
) -> None:
    stack = synthesis.stack
    fn = stack.jobs_api.function
    table, bucket = synthesis.logical_id(stack.jobs.table), synthesis.logical_id(stack.documents.bucket)
    log_group = "<{}.Arn>".format(synthesis.resource(fn)["Properties"]["LoggingConfig"]["LogGroup"]["Ref"])
    assert grants(resources, synthesis.logical_id(fn.role)) == {
        "logs:CreateLogStream": {log_group},
        "logs:PutLogEvents": {log_group},
        "dynamodb:GetItem": {f"<{table}.Arn>"},
        "dynamodb:PutItem": {f"<{table}.Arn>"},
        "dynamodb:Query": {f"<{table}.Arn>/index/owner-created_at-index"},
        # A job submitted by URL has no upload to trigger the drop folder: the API sends its message itself.
        "sqs:SendMessage": {f"<{synthesis.logical_id(stack.queue.queue)}.Arn>"},
        # Uploads; and a result in another format made on request from result.json (GET /jobs/{id}/result?format=).
        "s3:PutObject": {f"<{bucket}.Arn>/uploads/*", *(f"<{bucket}.Arn>/results/*/{name}" for name in ("result.hocr", "result.alto.xml", "textract.json"))},
        # Presigned result links, and a small result.json read to return it inline.
        "s3:GetObject": {f"<{bucket}.Arn>/results/*"},
        "s3:ListBucket": {f"<{bucket}.Arn>"},
        **tracing_grants(),
    }


def test_the_api_function_knows_the_job_queue_and_the_inline_result_limit(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    environment = synthesis.resource(stack.jobs_api.function)["Properties"]["Environment"]["Variables"]
    assert environment[ENV.QUEUE_URL] == {"Ref": synthesis.logical_id(stack.queue.queue)}
    assert environment[ENV.INLINE_RESULT_MAX_BYTES] == str(1024 * 1024)


def test_the_stage_logs_every_request_and_is_throttled(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    [stage] = _of_type(resources, "AWS::ApiGatewayV2::Stage")
    assert stage["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0] == synthesis.logical_id(
        synthesis.stack.jobs_api.node.find_child("AccessLogs")
    )
    assert '"sub":"$context.authorizer.claims.sub"' in stage["AccessLogSettings"]["Format"]
    assert stage["DefaultRouteSettings"] == {"ThrottlingBurstLimit": 100, "ThrottlingRateLimit": 50}


def test_cors_only_for_the_consoles_origins(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    distribution = synthesis.logical_id(synthesis.stack.console.distribution)
    console = {"Fn::Join": ["", ["https://", {"Fn::GetAtt": [distribution, "DomainName"]}]]}
    [api] = _of_type(resources, "AWS::ApiGatewayV2::Api")
    assert api["CorsConfiguration"]["AllowOrigins"] == [console]
    assert sorted(api["CorsConfiguration"]["AllowMethods"]) == ["GET", "POST"]
    # The platform bucket answers the console's uploads and result downloads, from those origins only.
    [rule] = synthesis.resource(synthesis.stack.documents.bucket)["Properties"]["CorsConfiguration"]["CorsRules"]
    assert (rule["AllowedOrigins"], sorted(rule["AllowedMethods"])) == ([console], ["GET", "POST"])
    stack = OcrPlatformStack(_app(), "WithConsole", config=PlatformConfig(console_origins=("https://ocr.example.com",)))
    [with_console] = Template.from_stack(stack).find_resources("AWS::ApiGatewayV2::Api").values()
    assert with_console["Properties"]["CorsConfiguration"]["AllowOrigins"][1:] == ["https://ocr.example.com"]


def test_the_console_is_served_by_cloudfront_from_a_private_bucket_with_security_headers(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    [distribution] = _of_type(resources, "AWS::CloudFront::Distribution")
    config = distribution["DistributionConfig"]
    behavior = config["DefaultCacheBehavior"]
    assert behavior["ViewerProtocolPolicy"] == "redirect-to-https" and config["DefaultRootObject"] == "index.html"
    [origin] = config["Origins"]
    assert "OriginAccessControlId" in origin and origin["S3OriginConfig"] == {"OriginAccessIdentity": ""}
    [policy] = _of_type(resources, "AWS::CloudFront::ResponseHeadersPolicy")
    security = policy["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    assert security["StrictTransportSecurity"]["AccessControlMaxAgeSec"] == 365 * 86400
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert "default-src 'self'" in security["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    bucket = synthesis.resource(synthesis.stack.console.bucket)["Properties"]
    assert "WebsiteConfiguration" not in bucket and bucket["LoggingConfiguration"]["LogFilePrefix"] == "console-bucket/"


def test_outputs_name_the_api_and_its_user_pool(template: Template) -> None:
    outputs = template.to_json()["Outputs"]
    assert {"ApiUrl", "UserPoolId", "UserPoolClientId"} <= set(outputs)


def test_a_console_origin_must_be_an_origin() -> None:
    import pytest

    with pytest.raises(ValueError, match="console_origins"):
        PlatformConfig(console_origins=("https://ocr.example.com/app",))
    assert PlatformConfig.from_context(_app_with({"ocr:console_origins": "https://a.example.com,http://localhost:8080"})).console_origins == (
        "https://a.example.com", "http://localhost:8080")


def _app_with(context: dict[str, str]) -> Any:
    from aws_cdk import App

    return App(context=context)


def test_the_console_client_allows_only_the_flows_the_console_calls(synthesis: Synthesis) -> None:
    """console/app.js signs in with USER_PASSWORD_AUTH and refreshes with REFRESH_TOKEN_AUTH; no SRP, no OAuth grant
    and no placeholder callback URL."""
    [client] = [r["Properties"] for r in synthesis.template_json["Resources"].values() if r["Type"] == "AWS::Cognito::UserPoolClient"]
    assert sorted(client["ExplicitAuthFlows"]) == ["ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_USER_PASSWORD_AUTH"]
    assert client["GenerateSecret"] is False
    assert client["AllowedOAuthFlowsUserPoolClient"] is False
    assert not {"AllowedOAuthFlows", "AllowedOAuthScopes", "CallbackURLs", "LogoutURLs"} & set(client)
    assert "example.com" not in json.dumps(client)
