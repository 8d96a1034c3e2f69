"""Both backends produce the same result contract with real OCR: the CPU processor Lambda handler (on
moto) and the vl-endpoint server over real HTTP (/ping, /invocations, error path)."""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocr_platform.core.results import validate_result
from ocr_platform.gpu.model_server import EndpointApp, make_server
from ocr_platform.jobs.store import NewJob
from tests.conftest import Platform
from tests.documents import ENGLISH_PAGES, character_error_rate


def _cer(result: dict, page_index: int, expected: list[str]) -> float:
    got = "\n".join(line["text"] for line in result["pages"][page_index]["lines"])
    return character_error_rate(got, "\n".join(expected))


def test_processor_handler_runs_real_ocr_on_a_pdf_from_s3(platform: Platform, ppocr, docs: dict[str, Path]) -> None:
    input_uri = platform.put_document("job-real", "scan.pdf", docs["image_pdf"].read_bytes())
    platform.store.create(NewJob("job-real", "pp-ocrv5", input_uri))
    platform.store.mark_processing("job-real", "lambda")

    response = platform.run_processor({"job_id": "job-real", "model": "pp-ocrv5", "input": input_uri, "language": "en", "pages": "2"})

    assert response["outcome"] == "completed"
    result = validate_result(platform.read_json("results/job-real/result.json"), job_id="job-real")
    assert [p["page"] for p in result["pages"]] == [2]
    assert _cer(result, 0, ENGLISH_PAGES[1]) <= 0.02
    assert platform.read_json("results/job-real/raw.json")["pages"][0]["page"] == 2
    job = platform.job("job-real")
    assert (job["status"], job["page_count"]) == ("COMPLETED", 1)


def test_processor_handler_fails_an_encrypted_pdf_with_its_code(platform: Platform, ppocr, docs: dict[str, Path]) -> None:
    input_uri = platform.put_document("job-enc", "secret.pdf", docs["encrypted"].read_bytes())
    platform.store.create(NewJob("job-enc", "pp-ocrv5", input_uri))

    platform.run_processor({"job_id": "job-enc", "model": "pp-ocrv5", "input": input_uri})

    job = platform.job("job-enc")
    assert job["status"] == "FAILED"
    assert job["error"] == {"code": "encrypted_pdf", "message": "The PDF is password protected; remove the password and resubmit."}


@pytest.fixture
def endpoint(platform: Platform, ppocr) -> Iterator[str]:
    """The endpoint server on a free loopback port, its engine the real PP-OCRv5 (the VL weights are not here)."""
    app = EndpointApp(lambda: ppocr)  # no S3 client: it runs network-isolated
    server = make_server(app, host="127.0.0.1", port=0, max_concurrency=2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    assert _get(url + "/ping")[0] == 503  # still loading
    app.load()
    yield url
    server.shutdown()
    server.server_close()


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _post(url: str, document: bytes, parameters: dict | None) -> tuple[int, dict]:
    """POST as SageMaker does: the document as the body, the parameters as the Custom-Attributes header; the
    answer's result.json (a ZIP) or error (JSON)."""
    headers = {"Content-Type": "application/octet-stream"}
    if parameters is not None:
        headers["X-Amzn-SageMaker-Custom-Attributes"] = json.dumps(parameters)
    request = urllib.request.Request(url, data=document, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            body = response.read()
            if response.headers["Content-Type"] == "application/zip":
                with zipfile.ZipFile(io.BytesIO(body)) as answer:
                    return response.status, json.loads(answer.read("result.json"))
            return response.status, json.loads(body)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_endpoint_ping_and_invocation_return_the_result_contract(endpoint: str, docs: dict[str, Path]) -> None:
    status, ping = _get(endpoint + "/ping")
    assert status == 200 and ping["status"] == "ready"

    parameters = {"job_id": "job-http", "model": "paddleocr-vl", "language": "en"}
    status, result = _post(endpoint + "/invocations", docs["png"].read_bytes(), parameters)

    assert status == 200
    validate_result(result, job_id="job-http")
    assert result["model"] == "paddleocr-vl"
    assert result["engine"]["name"] == "PP-OCRv5"  # the model that really ran here
    assert _cer(result, 0, ENGLISH_PAGES[0]) <= 0.02


@pytest.mark.parametrize(
    ("parameters", "document", "status", "code"),
    [(None, b"%PDF-1.4", 400, "invalid_message"),
     ({"job_id": "job-x", "model": "paddleocr-vl", "language": "EN!"}, b"%PDF-1.4", 400, "invalid_message"),
     ({"job_id": "job-x", "model": "paddleocr-vl"}, b"", 400, "empty_document")],
)
def test_endpoint_errors_are_non_2xx_json(endpoint: str, parameters: dict | None, document: bytes, status: int, code: str) -> None:
    got_status, payload = _post(endpoint + "/invocations", document, parameters)
    assert got_status == status
    assert payload["error"]["code"] == code and payload["error"]["message"]


def test_endpoint_refuses_a_bad_document_with_its_code(endpoint: str, platform: Platform) -> None:
    status, payload = _post(endpoint + "/invocations", b"plain text, not a PDF", {"job_id": "job-txt", "model": "paddleocr-vl"})
    assert (status, payload["error"]["code"]) == (400, "unsupported_type")


def test_endpoint_that_failed_to_load_reports_it_on_ping(platform: Platform) -> None:
    def broken():
        raise RuntimeError("CUDA out of memory")

    app = EndpointApp(broken)
    app.load()
    status, payload = app.ping()
    assert status == 500 and "CUDA out of memory" in payload["error"]
    response = app.invoke(b"%PDF-1.4", '{"job_id":"job-x","model":"paddleocr-vl"}')
    assert response.status == 500 and response.json()["error"]["code"] == "engine_unavailable"
