"""Jobs API Lambda (API Gateway HTTP API, payload 2.0): the routes a browser calls, over ``ocr_platform.inputs.jobs_api``.

Every route sits behind the API's JWT authorizer (the Cognito user pool); the caller is the token's ``sub``,
which API Gateway passes in ``requestContext.authorizer.jwt.claims``. A request without it is refused 401
here too. Bodies and query strings are validated by Powertools' event handler (422 with the field that failed).

- ``POST /jobs`` ``{"filename", "model", "language"?, "pages"?, "callback_url"?, "options"?}`` -> 201 ``{"job_id", "status",
  "upload": {url, fields}}``; or ``{"url", "model", ...}`` -> 201 ``{"job_id", "status"}`` (the platform fetches it)
- ``GET /jobs?limit=&next=`` -> ``{"jobs": [...], "next"}``, newest first
- ``GET /jobs/{job_id}`` -> the job's public attributes, progress included
- ``GET /jobs/{job_id}/result`` -> ``{"location", "result": <presigned URL>, "size", "inline"?, "pages": [{"page",
  "image"}], "pdf"?, "formats", "expires_in"}`` (``inline``: the result itself, when at most 1 MiB; ``pdf``: a link to the
  searchable result.pdf of a job whose options asked for one); ``formats``: links to the hOCR, ALTO and Textract
  files stored beside it, and with ``?format=hocr|alto|textract`` that file made from result.json when the job did
  not ask for it; 409 until it is COMPLETED
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, CORSConfig, Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from ocr_platform.core import defaults
from ocr_platform.core.safe_http import UrlPolicy
from ocr_platform.core.settings import ENV
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.handlers._services import services
from ocr_platform.inputs.jobs_api import ApiError, JobsApi

logger = Logger(service="ocr-api")


def _cors() -> CORSConfig | None:
    """Cross-origin answers only for the console's origins (``OCR_CONSOLE_ORIGINS``); none when unset."""
    origins = [origin for origin in os.environ.get(ENV.CONSOLE_ORIGINS, "").split(",") if origin]
    if not origins:
        return None
    return CORSConfig(allow_origin=origins[0], extra_origins=origins[1:], max_age=600, allow_credentials=False)


app = APIGatewayHttpResolver(enable_validation=True, cors=_cors())


class CreateJobRequest(BaseModel):
    """The body of ``POST /jobs``."""

    filename: str | None = Field(default=None, min_length=1, max_length=200)
    url: str | None = Field(default=None, min_length=8, max_length=2048)
    model: str = Field(min_length=1, max_length=64)
    language: str = Field(default=defaults.LANGUAGE, min_length=2, max_length=20)
    pages: str | None = Field(default=None, max_length=200)
    callback_url: str | None = Field(default=None, min_length=8, max_length=2048)
    #: Engine options, as the job message's ``options`` (docs/contracts.md, "Engine options").
    options: dict[str, Any] | None = None


def _api() -> JobsApi:
    svc = services()
    return JobsApi(
        svc.store, svc.s3, svc.layout, sqs=svc.sqs, queue_url=svc.settings.queue_url,
        url_policy=UrlPolicy(svc.settings.url_policy), inline_result_max_bytes=svc.settings.inline_result_max_bytes,
    )


def _caller() -> str:
    claims = (app.current_event.raw_event.get("requestContext", {}).get("authorizer") or {}).get("jwt", {}).get("claims", {})
    owner = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(owner, str) or not owner:
        raise ApiError(401, "unauthorized", "Sign in: the request carries no verified user.")
    return owner


@app.exception_handler(ApiError)
def _refused(err: ApiError) -> Response[Any]:
    return Response(status_code=err.status, content_type="application/json", body=err.as_body())


@app.post("/jobs")
def create_job(request: CreateJobRequest) -> Response[Any]:
    created = _api().create(
        _caller(), file_name=request.filename, url=request.url, model=request.model, language=request.language,
        pages=request.pages, callback_url=request.callback_url, options=request.options,
    )
    annotate_job(created["job_id"], model=request.model)
    return Response(status_code=201, content_type="application/json", body=created)


@app.get("/jobs")
def list_jobs(limit: Annotated[int, Query(ge=1, le=100)] = 20, next: Annotated[str | None, Query(max_length=2048)] = None) -> dict[str, Any]:  # noqa: A002 - the query parameter's name
    return _api().list(_caller(), limit=limit, next_token=next)


@app.get("/jobs/<job_id>")
def get_job(job_id: str) -> dict[str, Any]:
    annotate_job(job_id)
    return _api().get(_caller(), job_id)


@app.get("/jobs/<job_id>/result")
def get_result(job_id: str, format: Annotated[str | None, Query(max_length=16)] = None) -> dict[str, Any]:  # noqa: A002 - the query parameter's name
    annotate_job(job_id)
    return _api().result_links(_caller(), job_id, output=format)


# Its responses hold presigned URLs and up to 1 MiB of inline result: kept out of the trace's metadata.
@tracer.capture_lambda_handler(capture_response=False)
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
