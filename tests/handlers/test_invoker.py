"""Invoker Lambda against moto: routing, scale-out, busy endpoint, duplicates, bad messages."""

from __future__ import annotations

import json

import pytest

from tests.conftest import BUCKET, ENDPOINT, PROCESSOR, Platform


def _message(platform: Platform, job_id: str, model: str, **extra) -> dict:
    return {"job_id": job_id, "model": model, "input": platform.put_document(job_id), "language": "en", **extra}


def _submit(platform: Platform, job_id: str, model: str, **extra) -> dict:
    from ocr_platform.jobs.store import NewJob

    message = _message(platform, job_id, model, **extra)
    platform.store.create(NewJob(job_id, model, message["input"]))
    platform.enqueue(message)
    return message


@pytest.mark.parametrize("model", ["pp-ocrv5", "pp-ocrv6", "pp-structurev3"])
def test_cpu_models_are_invoked_asynchronously_on_the_processor(platform: Platform, model: str) -> None:
    message = _submit(platform, "job-cpu", model, pages="1-2", options={"det_limit": 960})

    response = platform.run_invoker()

    assert response == {"batchItemFailures": []}
    [call] = platform.calls["Invoke"]
    assert call["FunctionName"] == PROCESSOR
    assert call["InvocationType"] == "Event"
    assert json.loads(call["Payload"]) == {**message, "slot": "job-cpu"}  # the processor slot it holds
    job = platform.job("job-cpu")
    assert job["status"] == "PROCESSING"
    assert job["backend"] == "lambda"
    assert job["started_at"] and job["dispatched_at"] and job["updated_at"] >= job["created_at"]
    assert "InvokeEndpointAsync" not in platform.calls


def test_vl_job_scales_out_from_zero_and_submits_a_per_job_request(platform: Platform) -> None:
    assert platform.variant()["DesiredInstanceCount"] == 0
    message = _submit(platform, "job-vl", "paddleocr-vl")

    assert platform.run_invoker() == {"batchItemFailures": []}

    assert platform.variant()["DesiredInstanceCount"] == 1
    [update] = platform.calls["UpdateEndpointWeightsAndCapacities"]
    assert update["DesiredWeightsAndCapacities"] == [{"VariantName": "AllTraffic", "DesiredInstanceCount": 1}]
    [invoke] = platform.calls["InvokeEndpointAsync"]
    assert invoke["EndpointName"] == ENDPOINT
    assert invoke["InferenceId"] == "job-vl"
    # The request names the document itself (no copy) and carries the job's parameters in CustomAttributes.
    assert invoke["InputLocation"] == message["input"]
    assert json.loads(invoke["CustomAttributes"]) == {"job_id": "job-vl", "model": "paddleocr-vl", "language": "en"}
    assert invoke["Accept"] == "application/zip"
    assert invoke["InvocationTimeoutSeconds"] == 3600
    assert invoke["RequestTTLSeconds"] == 21_600  # the sweeper's GPU deadline counts it
    assert platform.keys("async/requests/") == []
    job = platform.job("job-vl")
    assert (job["status"], job["backend"]) == ("PROCESSING", "sagemaker")
    assert job["output_location"].startswith("s3://")  # where the sweeper finds it if the notification is lost
    assert "Invoke" not in platform.calls


def test_vl_job_does_not_touch_capacity_when_an_instance_is_already_desired(platform: Platform) -> None:
    platform.set_desired_instances(1)
    _submit(platform, "job-vl-warm", "paddleocr-vl")

    assert platform.run_invoker() == {"batchItemFailures": []}

    assert "UpdateEndpointWeightsAndCapacities" not in platform.calls
    assert len(platform.calls["InvokeEndpointAsync"]) == 1
    assert platform.variant()["DesiredInstanceCount"] == 1


def test_busy_endpoint_returns_the_message_for_a_later_retry_and_loses_nothing(platform: Platform) -> None:
    _submit(platform, "job-busy", "paddleocr-vl")
    platform.set_endpoint_status("Updating")

    response = platform.run_invoker()

    assert len(response["batchItemFailures"]) == 1
    assert platform.job("job-busy")["status"] == "QUEUED"
    assert "InvokeEndpointAsync" not in platform.calls
    assert platform.keys("async/requests/") == []

    platform.set_endpoint_status("InService")
    assert platform.run_invoker() == {"batchItemFailures": []}
    assert platform.job("job-busy")["status"] == "PROCESSING"
    assert platform.variant()["DesiredInstanceCount"] == 1


def test_endpoint_still_busy_on_the_last_receive_fails_the_job_instead_of_dropping_it(platform: Platform) -> None:
    _submit(platform, "job-never", "paddleocr-vl")
    platform.set_endpoint_status("Updating")

    assert len(platform.run_invoker()["batchItemFailures"]) == 1
    assert len(platform.run_invoker()["batchItemFailures"]) == 1
    assert platform.run_invoker() == {"batchItemFailures": []}  # third receive = maxReceiveCount

    job = platform.job("job-never")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "capacity_unavailable"
    assert "Updating" in job["error"]["message"]


@pytest.mark.parametrize("status", ["Creating", "Failed"])
def test_an_endpoint_not_in_service_keeps_the_job_queued_for_a_later_retry(platform: Platform, status: str) -> None:
    platform.set_endpoint_status(status)
    _submit(platform, "job-vl-early", "paddleocr-vl")

    response = platform.run_invoker()

    assert len(response["batchItemFailures"]) == 1  # the message comes back after the visibility timeout
    assert platform.job("job-vl-early")["status"] == "QUEUED"
    assert "InvokeEndpointAsync" not in platform.calls


def test_a_job_for_an_endpoint_that_does_not_exist_yet_waits_queued(platform: Platform) -> None:
    """The GPU stack deploys after the core (or rolled back alone): its jobs wait for it as for a Creating endpoint."""
    from ocr_platform.handlers._services import _client

    _client("sagemaker").delete_endpoint(EndpointName=ENDPOINT)
    _submit(platform, "job-vl-no-endpoint", "paddleocr-vl")

    assert len(platform.run_invoker()["batchItemFailures"]) == 1
    assert platform.job("job-vl-no-endpoint")["status"] == "QUEUED"
    assert len(platform.run_invoker()["batchItemFailures"]) == 1
    assert platform.run_invoker() == {"batchItemFailures": []}  # third receive = maxReceiveCount

    job = platform.job("job-vl-no-endpoint")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "capacity_unavailable")
    assert "deploy the GPU stack" in job["error"]["message"]
    assert "InvokeEndpointAsync" not in platform.calls


def test_a_validation_error_from_an_endpoint_that_is_not_serving_is_retried_not_failed(platform: Platform) -> None:
    from botocore.exceptions import ClientError

    from ocr_platform.core.errors import RetryLaterError
    from ocr_platform.gpu.sagemaker_async import AsyncInference
    from ocr_platform.handlers._services import _client
    from ocr_platform.jobs.messages import parse_job_message

    class RefusingRuntime:  # what SageMaker answers an endpoint that is still Creating
        def invoke_endpoint_async(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "ValidationError", "Message": "Endpoint is Creating."}}, "InvokeEndpointAsync")

    platform.set_endpoint_status("Creating")
    message = parse_job_message(_submit(platform, "job-vl-race", "paddleocr-vl"))
    inference = AsyncInference(ENDPOINT, platform.layout, runtime=RefusingRuntime(), sagemaker=_client("sagemaker"))
    with pytest.raises(RetryLaterError, match="is Creating"):
        inference.submit(message)


def test_parameters_too_long_for_custom_attributes_fail_the_job_invalid_message(platform: Platform) -> None:
    _submit(platform, "job-vl-big", "paddleocr-vl", options={"note": "x" * 1000})

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-vl-big")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "invalid_message")
    assert "CustomAttributes" in job["error"]["message"] and "1024" in job["error"]["message"]
    assert "InvokeEndpointAsync" not in platform.calls


def test_unknown_model_fails_the_job_with_a_clear_error_and_routes_nowhere(platform: Platform) -> None:
    _submit(platform, "job-unknown", "tesseract")

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-unknown")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "unknown_model"
    assert "pp-ocrv5" in job["error"]["message"]
    assert "Invoke" not in platform.calls and "InvokeEndpointAsync" not in platform.calls


def test_malformed_message_with_a_job_id_fails_that_job(platform: Platform) -> None:
    platform.enqueue({"job_id": "job-bad", "model": "pp-ocrv5", "input": "not-an-s3-uri"})

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-bad")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "invalid_message"
    assert "input" in job["error"]["message"]
    assert "Invoke" not in platform.calls


@pytest.mark.parametrize("model", ["pp-ocrv5", "paddleocr-vl"])
def test_one_job_id_limit_for_every_route_64_characters(platform: Platform, model: str) -> None:
    """SageMaker refuses an InferenceId over 64 characters, so no route admits a longer job id."""
    platform.set_desired_instances(1)
    longest, too_long = "a" * 64, "b" * 65
    platform.enqueue({"job_id": too_long, "model": model, "input": f"s3://{BUCKET}/documents/{too_long}/a.png"})
    assert platform.run_invoker() == {"batchItemFailures": []}
    job = platform.job(too_long)
    assert job["status"] == "FAILED" and job["error"]["code"] == "invalid_message"
    assert "at most 64" in job["error"]["message"]
    assert "Invoke" not in platform.calls and "InvokeEndpointAsync" not in platform.calls

    _submit(platform, longest, model)
    assert platform.run_invoker() == {"batchItemFailures": []}
    assert platform.job(longest)["dispatched_at"]
    if model == "paddleocr-vl":
        assert platform.calls["InvokeEndpointAsync"][0]["InferenceId"] == longest


@pytest.mark.parametrize("body", ["{not json", json.dumps({"model": "pp-ocrv5"}), json.dumps(["a", "list"])])
def test_malformed_message_without_a_job_id_is_dropped_not_retried(platform: Platform, body: str) -> None:
    platform.enqueue(body)

    assert platform.run_invoker() == {"batchItemFailures": []}

    assert platform.sqs.receive_message(QueueUrl=platform.queue_url).get("Messages") is None
    assert platform.store.table.scan()["Items"] == []


def test_duplicate_delivery_dispatches_the_job_once(platform: Platform) -> None:
    message = _submit(platform, "job-dup", "pp-ocrv5")
    platform.enqueue(message)  # the same message delivered twice

    platform.run_invoker()
    platform.run_invoker()

    assert len(platform.calls["Invoke"]) == 1
    assert platform.job("job-dup")["status"] == "PROCESSING"


def test_a_message_for_a_finished_job_changes_nothing(platform: Platform) -> None:
    message = _submit(platform, "job-done", "pp-ocrv5")
    platform.run_invoker()
    platform.store.mark_completed("job-done", result_uri=f"s3://{BUCKET}/results/job-done/result.json", page_count=1)

    platform.enqueue(message)
    platform.run_invoker()

    assert len(platform.calls["Invoke"]) == 1
    assert platform.job("job-done")["status"] == "COMPLETED"


def test_job_claimed_but_not_dispatched_is_dispatched_on_redelivery(platform: Platform) -> None:
    from botocore.exceptions import ClientError

    from ocr_platform.handlers import _services

    def throttled(**_: object) -> None:
        raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Invoke")

    _submit(platform, "job-retry", "pp-ocrv5")
    events = _services._client("lambda").meta.events
    events.register("before-call.lambda.Invoke", throttled, unique_id="throttle")

    assert len(platform.run_invoker()["batchItemFailures"]) == 1
    job = platform.job("job-retry")
    assert job["status"] == "PROCESSING" and "dispatched_at" not in job

    events.unregister("before-call.lambda.Invoke", unique_id="throttle")
    assert platform.run_invoker() == {"batchItemFailures": []}
    assert platform.job("job-retry")["dispatched_at"]
    assert len(platform.calls["Invoke"]) == 2  # the throttled attempt and the one that went through


def test_a_message_without_a_job_item_is_tracked_from_the_invoker_on(platform: Platform) -> None:
    platform.enqueue(_message(platform, "job-noitem", "pp-ocrv5", language="korean"))

    platform.run_invoker()

    job = platform.job("job-noitem")
    assert (job["status"], job["model"], job["language"]) == ("PROCESSING", "pp-ocrv5", "korean")
    assert job["created_at"]


def test_model_whose_backend_is_not_deployed_fails_clearly(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.handlers import _services

    monkeypatch.setenv("OCR_ENDPOINT_NAME", "")
    _services.services.cache_clear()
    _submit(platform, "job-nogpu", "paddleocr-vl")

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-nogpu")
    assert job["status"] == "FAILED" and job["error"]["code"] == "unknown_model"
    assert "not deployed" in job["error"]["message"]


@pytest.fixture
def document_site(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a generator fixture
    """A web server on 127.0.0.1 with one scan (``/scans/page.png``), and the invoker allowed to fetch from it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ocr_platform.core.settings import ENV
    from ocr_platform.handlers import _services
    from tests.documents import tiny_png

    body = tiny_png()

    class Site(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            found = self.path == "/scans/page.png"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body) if found else 0))
            self.end_headers()
            if found:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(ENV.URL_POLICY, "local")
    _services.services.cache_clear()  # the settings again; the clients (whose calls the platform records) stay
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", body
    finally:
        server.shutdown()
        server.server_close()
        _services.services.cache_clear()


def test_a_document_submitted_by_url_is_fetched_into_the_bucket_before_the_hand_over(platform: Platform, document_site) -> None:  # noqa: ANN001
    site, body = document_site
    platform.enqueue({"job_id": "job-url", "model": "pp-ocrv5", "input": f"{site}/scans/page.png"})

    assert platform.run_invoker() == {"batchItemFailures": []}

    stored = f"s3://{BUCKET}/documents/job-url/page.png"
    [call] = platform.calls["Invoke"]
    assert json.loads(call["Payload"])["input"] == stored  # the processor reads the object, as an upload
    assert platform.s3.get_object(Bucket=BUCKET, Key="documents/job-url/page.png")["Body"].read() == body
    job = platform.job("job-url")
    assert (job["status"], job["input"], job["input_url"], job["file_name"]) == ("PROCESSING", stored, f"{site}/scans/page.png", "page.png")


def test_a_document_url_that_answers_404_fails_the_job_without_a_hand_over(platform: Platform, document_site) -> None:  # noqa: ANN001
    site, _ = document_site
    platform.enqueue({"job_id": "job-url-404", "model": "pp-ocrv5", "input": f"{site}/scans/missing.png"})

    assert platform.run_invoker() == {"batchItemFailures": []}

    assert platform.calls.get("Invoke", []) == []  # no hand-over
    job = platform.job("job-url-404")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "input_unreachable")
    assert "404" in job["error"]["message"]


def test_an_http_callback_url_fails_the_job_in_a_deployed_stage(platform: Platform) -> None:
    message = _submit(platform, "job-hook-http", "pp-ocrv5", callback_url="http://hooks.example.com/ocr")

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-hook-http")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "invalid_message")
    assert "must use https" in job["error"]["message"] and message["callback_url"] == job["callback_url"]
