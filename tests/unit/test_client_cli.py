"""Client API and CLI against moto: submit/status/result, stack outputs, standard endpoint variables."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.cli.client import OcrClient, PlatformResources
from ocr_platform.core.client_errors import PlatformClientError
from tests.conftest import BUCKET, TABLE, Platform


@pytest.fixture
def resources(platform: Platform) -> PlatformResources:
    return PlatformResources(BUCKET, platform.queue_url, TABLE)


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "my scan.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n-bytes-")
    return path


def test_submit_uploads_writes_a_queued_item_and_enqueues_the_contract_message(platform: Platform, resources: PlatformResources, document: Path) -> None:
    job = OcrClient(resources).submit(document, model="pp-structurev3", language="ch", pages="2-3")

    job_id = job["job_id"]
    key = f"documents/{job_id}/my_scan.png"
    assert platform.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == document.read_bytes()
    item = platform.job(job_id)
    assert (item["status"], item["model"], item["language"], item["pages"]) == ("QUEUED", "pp-structurev3", "ch", "2-3")
    assert item["file_name"] == "my scan.png"
    [message] = platform.sqs.receive_message(QueueUrl=platform.queue_url)["Messages"]
    assert json.loads(message["Body"]) == {"job_id": job_id, "model": "pp-structurev3", "input": f"s3://{BUCKET}/{key}", "language": "ch", "pages": "2-3"}


def test_each_submit_is_a_new_job(platform: Platform, resources: PlatformResources, document: Path) -> None:
    client = OcrClient(resources)
    assert client.submit(document, model="pp-ocrv5")["job_id"] != client.submit(document, model="pp-ocrv5")["job_id"]


@pytest.mark.parametrize(("kwargs", "fragment"), [({"model": "nope"}, "Unknown model"), ({"model": "pp-ocrv5", "pages": "a"}, "pages")])
def test_submit_refuses_bad_requests_before_uploading(platform: Platform, resources: PlatformResources, document: Path, kwargs: dict, fragment: str) -> None:
    with pytest.raises(PlatformClientError, match=fragment):
        OcrClient(resources).submit(document, **kwargs)
    assert platform.keys("documents/") == []


def test_result_is_refused_until_completed_and_returned_after(platform: Platform, resources: PlatformResources, document: Path) -> None:
    client = OcrClient(resources)
    job_id = client.submit(document, model="pp-ocrv5")["job_id"]
    with pytest.raises(PlatformClientError, match="QUEUED"):
        client.result(job_id)
    platform.store.mark_processing(job_id, "lambda")
    platform.s3.put_object(Bucket=BUCKET, Key=f"results/{job_id}/result.json", Body=b'{"job_id": "%s", "page_count": 1}' % job_id.encode())
    platform.store.mark_completed(job_id, result_uri=f"s3://{BUCKET}/results/{job_id}/result.json", page_count=1)
    assert client.result(job_id)["job_id"] == job_id
    assert client.wait(job_id, timeout=1)["status"] == "COMPLETED"


def test_resources_from_stack_outputs(platform: Platform) -> None:
    template = {
        "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {k: {"Value": v} for k, v in {"BucketName": BUCKET, "QueueUrl": platform.queue_url, "TableName": TABLE, "EndpointName": "vl"}.items()},
    }
    boto3.client("cloudformation").create_stack(StackName="ocr-platform-test", TemplateBody=json.dumps(template))
    assert PlatformResources.from_stack("ocr-platform-test") == PlatformResources(BUCKET, platform.queue_url, TABLE, "vl")
    with pytest.raises(PlatformClientError, match="cdk deploy") as missing:
        PlatformResources.from_stack("no-such-stack")
    assert missing.value.code == "stack_not_found"


def test_cli_submit_status_result_round_trip(
    platform: Platform, document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OCR_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("OCR_QUEUE_URL", platform.queue_url)
    monkeypatch.setenv("OCR_TABLE_NAME", TABLE)

    assert cli.main(["submit", str(document), "--model", "pp-ocrv5", "--lang", "fr"]) == 0
    job_id = json.loads(capsys.readouterr().out)["job_id"]

    assert cli.main(["status", job_id]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "QUEUED"

    assert cli.main(["result", job_id]) == 4
    assert "error: result_not_ready: " in capsys.readouterr().err

    platform.store.mark_processing(job_id, "lambda")
    platform.store.mark_failed(job_id, __import__("ocr_platform.core.errors", fromlist=["JobError"]).JobError("corrupt_document", "The PDF is truncated."))
    assert cli.main(["status", job_id]) == 1
    assert cli.main(["result", job_id, "--output", str(tmp_path / "r.json")]) == 1
    assert "corrupt_document: The PDF is truncated." in capsys.readouterr().err


def test_cli_uses_standard_endpoint_variables(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens: the call must go there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_METADATA_SERVICE_NUM_ATTEMPTS", "1")
    assert cli.main(["status", "abc", "--stack", "ocr-platform-dev"]) == 3
    assert capsys.readouterr().err.startswith("error: endpoint_unreachable: ")


def test_cli_status_prints_a_completed_jobs_warning_where_a_person_sees_it(
    platform: Platform, resources: PlatformResources, document: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from ocr_platform.core.results import engine_fallback_warning

    for name, value in {"OCR_BUCKET_NAME": BUCKET, "OCR_QUEUE_URL": platform.queue_url, "OCR_TABLE_NAME": TABLE}.items():
        monkeypatch.setenv(name, value)
    job_id = OcrClient(resources).submit(document, model="pp-structurev3")["job_id"]
    platform.store.mark_processing(job_id, "lambda")
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="RuntimeError: no weights")
    platform.store.mark_completed(job_id, result_uri=f"s3://{BUCKET}/results/{job_id}/result.json", page_count=1, warnings=[warning])

    assert cli.main(["status", job_id]) == 0

    captured = capsys.readouterr()
    assert json.loads(captured.out)["warnings"] == [warning]
    assert captured.err.splitlines()[-1] == f"warning: engine_fallback: {warning['message']}"


def test_submit_wait_draws_a_progress_bar_of_pages_with_an_eta(
    platform: Platform, document: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Between two polls of ``submit --wait`` (its sleep), a processor reads 5 of the job's 20 pages."""
    for name, value in (("OCR_BUCKET_NAME", BUCKET), ("OCR_QUEUE_URL", platform.queue_url), ("OCR_TABLE_NAME", TABLE)):
        monkeypatch.setenv(name, value)

    def processor_reads_five_pages(seconds: float) -> None:
        [item] = platform.store.table.scan()["Items"]
        job_id, done = item["job_id"], int(item.get("pages_done", -1))
        if done < 0:
            platform.store.mark_processing(job_id, "lambda")
            platform.store.record_page_count(job_id, 20)
        elif done < 20:
            platform.store.add_pages_done(job_id, 5)
        else:
            platform.store.mark_completed(job_id, result_uri=f"s3://{BUCKET}/results/{job_id}/result.json", page_count=20)

    monkeypatch.setattr("ocr_platform.cli.client.time.sleep", processor_reads_five_pages)

    assert cli.main(["submit", str(document), "--model", "pp-ocrv5", "--wait"]) == 0

    lines = [line.strip() for line in capsys.readouterr().err.splitlines()[1:]]
    assert lines[:2] == ["QUEUED", "PROCESSING [                    ]  0/20 pages"]
    assert [line.split(",")[0] for line in lines[2:5]] == [
        "PROCESSING [#####               ]  5/20 pages", "PROCESSING [##########          ] 10/20 pages",
        "PROCESSING [###############     ] 15/20 pages",
    ]
    assert all(", ETA " in line and line.endswith(" s") for line in lines[2:5])
    assert lines[5:] == ["PROCESSING [####################] 20/20 pages", "COMPLETED [####################] 20/20 pages"]


def test_console_publish_uploads_the_console_and_its_config_and_refreshes_the_distribution(
    platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    cloudfront = boto3.client("cloudfront")
    distribution = cloudfront.create_distribution(DistributionConfig={
        "CallerReference": "console", "Comment": "", "Enabled": True,
        "Origins": {"Quantity": 1, "Items": [{"Id": "files", "DomainName": f"{BUCKET}.s3.amazonaws.com", "S3OriginConfig": {"OriginAccessIdentity": ""}}]},
        "DefaultCacheBehavior": {
            "TargetOriginId": "files", "ViewerProtocolPolicy": "redirect-to-https", "MinTTL": 0,
            "ForwardedValues": {"QueryString": False, "Cookies": {"Forward": "none"}}, "TrustedSigners": {"Enabled": False, "Quantity": 0},
        },
    })["Distribution"]
    outputs = {"BucketName": BUCKET, "QueueUrl": platform.queue_url, "TableName": TABLE, "ConsoleBucketName": BUCKET,
               "ConsoleDistributionId": distribution["Id"], "ConsoleUrl": "https://d1.cloudfront.net",
               "ApiUrl": "https://api.example.com", "UserPoolClientId": "client-1"}
    template = {"Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}}, "Outputs": {k: {"Value": v} for k, v in outputs.items()}}
    boto3.client("cloudformation").create_stack(StackName="ocr-console-test", TemplateBody=json.dumps(template))

    assert cli.main(["console", "publish", "--stack", "ocr-console-test", "--region", "us-east-1"]) == 0

    assert "open https://d1.cloudfront.net" in capsys.readouterr().err
    assert {"index.html", "app.js", "style.css", "config.json"} <= set(platform.keys())
    assert platform.read_json("config.json") == {"apiUrl": "https://api.example.com", "cognitoUrl": "https://cognito-idp.us-east-1.amazonaws.com/",
                                                  "userPoolClientId": "client-1"}
    assert platform.s3.head_object(Bucket=BUCKET, Key="app.js")["ContentType"] == "text/javascript"
    assert cloudfront.list_invalidations(DistributionId=distribution["Id"])["InvalidationList"]["Quantity"] == 1
