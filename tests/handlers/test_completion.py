"""Completion handler against moto: SageMaker success/error notifications through SNS, and processor crashes."""

from __future__ import annotations

import json

import pytest

from ocr_platform.core.results import engine_fallback_warning
from ocr_platform.jobs.store import NewJob
from tests.aws_events import FakeLambdaContext, lambda_failure_record, sagemaker_notification
from tests.conftest import BUCKET, ENDPOINT, Platform

VALID_OUTPUT = {
    "job_id": "job-vl",
    "model": "paddleocr-vl",
    "engine": {"name": "PaddleOCR-VL", "models": ["PaddleOCR-VL-0.9B"], "version": "3.3.0"},
    "page_count": 1,
    "text": "Invoice 42",
    "pages": [{"page": 1, "width": 1654, "height": 2339, "scale": 2.0,
               "lines": [{"text": "Invoice 42", "polygon": [[10, 10], [300, 10], [300, 60], [10, 60]], "score": 0.97}],
               "blocks": [{"label": "title", "bbox": [10, 10, 300, 60], "text": "Invoice 42"}], "markdown": "# Invoice 42"}],
    "timings": {"inference": 12.5},
}


def _vl_job(platform: Platform, job_id: str = "job-vl") -> str:
    input_uri = platform.put_document(job_id, "scan.pdf")
    platform.store.create(NewJob(job_id, "paddleocr-vl", input_uri))
    platform.store.mark_processing(job_id, "sagemaker")
    return f"s3://{BUCKET}/async/requests/{job_id}.json"


def _success(platform: Platform, job_id: str, output: object) -> str:
    key = f"async/outputs/{job_id}.out"
    body = output if isinstance(output, str) else json.dumps(output)
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=body.encode())
    return sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=f"s3://{BUCKET}/async/requests/{job_id}.json",
                                  output_location=f"s3://{BUCKET}/{key}")


def test_success_notification_publishes_result_and_completes_the_job(platform: Platform) -> None:
    _vl_job(platform)

    response = platform.publish("success", _success(platform, "job-vl", VALID_OUTPUT))

    assert response == {"outcomes": ["completed"]}
    assert platform.read_json("results/job-vl/result.json") == {**VALID_OUTPUT, "warnings": []}
    job = platform.job("job-vl")
    assert (job["status"], job["page_count"]) == ("COMPLETED", 1)
    assert job["result"] == f"s3://{BUCKET}/results/job-vl/result.json"
    assert "warnings" not in job


def test_endpoint_result_warnings_are_copied_to_the_job_item(platform: Platform) -> None:
    warning = engine_fallback_warning(requested="PaddleOCR-VL", ran="PP-OCRv5", reason="RuntimeError: no GPU weights")
    output = {**VALID_OUTPUT, "engine": {**VALID_OUTPUT["engine"], "name": "PP-OCRv5 (fallback: ...)"}, "warnings": [warning]}
    _vl_job(platform)

    assert platform.publish("success", _success(platform, "job-vl", output)) == {"outcomes": ["completed"]}

    assert platform.read_json("results/job-vl/result.json")["warnings"] == [warning]
    job = platform.job("job-vl")
    assert job["status"] == "COMPLETED" and job["warnings"] == [warning]


def test_the_endpoints_result_pdf_is_recorded_on_the_item_and_kept_out_of_result_json(platform: Platform) -> None:
    _vl_job(platform)
    pdf = f"s3://{BUCKET}/results/job-vl/result.pdf"

    assert platform.publish("success", _success(platform, "job-vl", {**VALID_OUTPUT, "result_pdf": pdf})) == {"outcomes": ["completed"]}

    assert platform.read_json("results/job-vl/result.json") == {**VALID_OUTPUT, "warnings": []}
    job = platform.job("job-vl")
    assert (job["status"], job["result_pdf"]) == ("COMPLETED", pdf)


def test_error_notification_fails_the_job_with_the_endpoint_error_body(platform: Platform) -> None:
    request = _vl_job(platform)
    platform.s3.put_object(Bucket=BUCKET, Key="async/failures/job-vl-error.out",
                           Body=json.dumps({"error": {"code": "encrypted_pdf", "message": "The PDF is password protected."}}).encode())
    note = sagemaker_notification("job-vl", endpoint=ENDPOINT, input_location=request,
                                  failure_reason="ClientError: Received client error (400) from model.",
                                  failure_location=f"s3://{BUCKET}/async/failures/job-vl-error.out")

    assert platform.publish("error", note) == {"outcomes": ["failed"]}

    job = platform.job("job-vl")
    assert job["status"] == "FAILED"
    assert job["error"] == {"code": "encrypted_pdf", "message": "The PDF is password protected."}


def test_error_notification_without_a_body_uses_sagemakers_failure_reason(platform: Platform) -> None:
    request = _vl_job(platform)
    note = sagemaker_notification("job-vl", endpoint=ENDPOINT, input_location=request,
                                  failure_reason="ClientError: Received server error (500) from model.")

    platform.publish("error", note)

    job = platform.job("job-vl")
    assert job["error"]["code"] == "inference_failed"
    assert "server error (500)" in job["error"]["message"]


def test_repeated_notifications_never_change_a_finished_job(platform: Platform) -> None:
    request = _vl_job(platform)
    success = _success(platform, "job-vl", VALID_OUTPUT)
    platform.publish("success", success)

    assert platform.publish("success", success) == {"outcomes": ["ignored"]}
    late_error = sagemaker_notification("job-vl", endpoint=ENDPOINT, input_location=request, failure_reason="late")
    assert platform.publish("error", late_error) == {"outcomes": ["ignored"]}

    assert platform.job("job-vl")["status"] == "COMPLETED"


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        ("not json at all", "not JSON"),
        ({**VALID_OUTPUT, "job_id": "someone-else"}, "someone-else"),
        ({"job_id": "job-vl"}, "model"),
        ({**VALID_OUTPUT, "warnings": [{"code": "engine_fallback"}]}, "warning needs string fields"),
        ({**VALID_OUTPUT, "result_pdf": "s3://elsewhere/job-vl/result.pdf"}, "reports result.pdf at 's3://elsewhere/"),
    ],
)
def test_invalid_endpoint_output_fails_the_job_invalid_result(platform: Platform, output: object, fragment: str) -> None:
    _vl_job(platform)

    platform.publish("success", _success(platform, "job-vl", output))

    job = platform.job("job-vl")
    assert job["status"] == "FAILED" and job["error"]["code"] == "invalid_result"
    assert fragment in job["error"]["message"]
    assert platform.keys("results/") == []


@pytest.mark.parametrize(
    ("error_type", "error_message", "code"),
    [("Sandbox.Timedout", "2026-11-22T07:15:00Z abc Task timed out after 900.00 seconds", "timed_out"),
     ("Runtime.ExitError", "RequestId: abc Error: Runtime exited with error: signal: killed", "processor_crashed")],
)
def test_processor_failure_destination_record_fails_the_job(platform: Platform, error_type: str, error_message: str, code: str) -> None:
    from ocr_platform.handlers import completion

    input_uri = platform.put_document("job-crash")
    platform.store.create(NewJob("job-crash", "pp-ocrv5", input_uri))
    platform.store.mark_processing("job-crash", "lambda")
    payload = {"job_id": "job-crash", "model": "pp-ocrv5", "input": input_uri, "language": "en"}
    record = lambda_failure_record(payload, error_type=error_type, error_message=error_message,
                                   function_arn="arn:aws:lambda:us-east-1:123456789012:function:ocr-processor")

    assert completion.handler(record, FakeLambdaContext()) == {"outcomes": ["failed"]}

    job = platform.job("job-crash")
    assert job["status"] == "FAILED" and job["error"]["code"] == code
    assert error_message in job["error"]["message"]


def _job_metrics(output: str) -> list[dict]:
    """The EMF blobs the handler printed (Powertools Metrics), one per invocation that counted something."""
    return [blob for line in output.splitlines() if line.startswith("{") and "_aws" in (blob := json.loads(line))]


def test_a_finished_job_is_counted_once_for_the_failed_job_rate_alarm(platform: Platform, capsys: pytest.CaptureFixture[str]) -> None:
    request = _vl_job(platform)
    failure = sagemaker_notification("job-vl", endpoint=ENDPOINT, input_location=request, failure_reason="ModelError: boom")
    capsys.readouterr()

    platform.publish("error", failure)
    platform.publish("error", failure)  # SNS delivers it again: nothing more is counted

    [blob] = _job_metrics(capsys.readouterr().out)
    [directive] = blob["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "OcrPlatform/test"
    # The alarm reads the service-only set; the route and error code sets are the dashboard's breakdowns.
    assert directive["Dimensions"] == [["service"], ["service", "route"], ["service", "error_code"]] and blob["service"] == "jobs"
    assert (blob["route"], blob["error_code"]) == ("paddleocr-vl", "inference_failed")
    assert blob["JobsFailed"] == [1.0] and "JobsCompleted" not in blob
