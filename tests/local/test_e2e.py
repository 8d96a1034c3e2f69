"""End to end through the local stack: real handlers, real OCR, moto, our Lambda and SageMaker runtimes.

One local stack per test session (started as ``ocr-platform local up`` does, in its own process, with
short time scales: 0.5 s alarm periods, 2 s visibility timeout) and stopped at the end of the session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from ocr_platform.cli.client import OcrClient, PlatformResources
from ocr_platform.local import stack, supervisor
from ocr_platform.local.provisioning import create_jobs_table
from tests import documents
from tests.browser import QUIET_FLAGS, chromium
from tests.documents import ENGLISH_PAGES, character_error_rate, render_page
from tests.local.campaign import queue_depth
from tests.local.sign_in import PASSWORD, TEMPORARY_PASSWORD
from tests.local.sign_in import choose_password as _choose_password
from tests.local.sign_in import id_token as _id_token
from tests.local.sign_in import invite as _invite
from tests.local.sign_in import open_console as _open_console
from tests.local.sign_in import sign_in as _sign_in
from tests.local.webhook_receiver import WebhookReceiver, receiver_that_is_down

IDLE_PERIODS = 10
PERIOD_SECONDS = 0.5
#: Webhook retries after 1 s, doubling to 2 s, for 8 s (AWS: 30 s, 1 h, 24 h): a dead receiver is given up soon.
WEBHOOK_RETRY_SECONDS = (1, 2, 8)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, docs: dict[str, Path]) -> Iterator[stack.StackInfo]:
    home = tmp_path_factory.mktemp("local-stack")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(supervisor.STATE_DIR_ENV, str(home))
        patch.setenv("OCR_MODEL_HUB", "off")  # offline: every model from installed packages
        patch.setenv("OCR_MODEL_CACHE_DIR", str(home / "models"))
        options = stack.LocalOptions(
            period_seconds=PERIOD_SECONDS, visibility_timeout_seconds=2, retry_delays_seconds=(0.2, 0.2),
            webhook_retry_seconds=WEBHOOK_RETRY_SECONDS,
        )
        info, started = supervisor.up(options=options, timeout=300)  # a deadline, not a wait: a busy machine only takes longer
        assert started
        again, started_again = supervisor.up(options=options)
        assert (again, started_again) == (info, False)  # a second `up` reuses the running stack
        try:
            yield info
        finally:
            assert supervisor.down()
        # Still inside the patch: this module's home. Outside it, a stack the user runs would answer.
        assert supervisor.running_stack() is None and not (home / "stack.json").exists()


@pytest.fixture(autouse=True)
def local_aws(local: stack.StackInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every boto3 client of the test at the local stack (after the suite's no-real-AWS guard)."""
    for name, value in local.client_environment().items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def client(local: stack.StackInfo) -> OcrClient:
    return OcrClient(PlatformResources(local.bucket, local.queue_url, local.table))


def _wait(client: OcrClient, job_id: str, timeout: float = 180) -> dict[str, Any]:
    return client.wait(job_id, timeout=timeout, poll_seconds=0.2)


def _desired(local: stack.StackInfo) -> int:
    variant = boto3.client("sagemaker").describe_endpoint(EndpointName=local.endpoint)["ProductionVariants"][0]
    return int(variant["DesiredInstanceCount"])


def _cer(result: dict, index: int, expected: list[str]) -> float:
    return character_error_rate("\n".join(line["text"] for line in result["pages"][index]["lines"]), "\n".join(expected))


def test_pp_ocrv5_on_a_pdf_goes_queued_processing_completed(client: OcrClient, docs: dict[str, Path]) -> None:
    job = client.submit(docs["image_pdf"], model="pp-ocrv5")
    assert job["status"] == "QUEUED"

    done = _wait(client, job["job_id"])

    assert (done["status"], done["backend"], done["page_count"]) == ("COMPLETED", "lambda", 2)
    assert done["created_at"] <= done["started_at"] <= done["finished_at"]
    result = client.result(job["job_id"])
    assert _cer(result, 0, ENGLISH_PAGES[0]) <= 0.02 and _cer(result, 1, ENGLISH_PAGES[1]) <= 0.02
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=client.resources.bucket, Prefix=f"results/{job['job_id']}/")["Contents"]}
    assert keys == {f"results/{job['job_id']}/{name}" for name in ("result.json", "raw.json", "pages/00001.jpg", "pages/00002.jpg")}


def test_pp_ocrv5_on_an_image(client: OcrClient, docs: dict[str, Path]) -> None:
    job = client.submit(docs["png"], model="pp-ocrv5")
    done = _wait(client, job["job_id"])
    assert done["status"] == "COMPLETED"
    assert _cer(client.result(job["job_id"]), 0, ENGLISH_PAGES[0]) <= 0.02


def test_pp_ocrv6_reads_an_upside_down_scan_on_the_page_as_submitted(client: OcrClient, docs: dict[str, Path], tmp_path: Path) -> None:
    from PIL import Image

    upside_down = tmp_path / "upside-down.png"
    Image.open(docs["png"]).transpose(Image.Transpose.ROTATE_180).save(upside_down)

    job = client.submit(upside_down, model="pp-ocrv6")
    done = _wait(client, job["job_id"])

    assert (done["status"], done["backend"]) == ("COMPLETED", "lambda")
    result = client.result(job["job_id"])
    [page] = result["pages"]
    assert page["rotation"] == 180 and _cer(result, 0, ENGLISH_PAGES[0]) <= 0.02
    assert result["engine"]["models"][:2] == ["PP-OCRv6_tiny_det", "PP-OCRv6_tiny_rec"]  # the default: tiny on faster-paddle
    # The first line's polygon is on the page as uploaded: upside down, it sits near the page's foot.
    first = page["lines"][0]["polygon"]
    assert min(y for _, y in first) > page["height"] / 2


def test_pp_structurev3_runs_and_names_the_model_that_really_ran(client: OcrClient, docs: dict[str, Path]) -> None:
    job = client.submit(docs["png"], model="pp-structurev3")
    done = _wait(client, job["job_id"])
    assert done["status"] == "COMPLETED"
    result = client.result(job["job_id"])
    assert result["model"] == "pp-structurev3"
    # Its weights cannot be had offline: the local substitute (PP-OCRv5 + PP-Structure layout and table models) runs.
    assert result["engine"]["name"] == "PP-OCRv5 + PicoDet CDLA layout + SLANet table (local substitute for PP-StructureV3)"
    assert result["pages"][0]["blocks"] and result["pages"][0]["markdown"]
    [warning] = done["warnings"]  # the local stack turns fallback on, and says so on the job and the result
    assert (warning["code"], warning["requested"], warning["ran"]) == ("engine_fallback", "PP-StructureV3", result["engine"]["name"])
    assert result["warnings"] == done["warnings"]
    assert _cer(result, 0, ENGLISH_PAGES[0]) <= 0.02


def test_cpu_route_failure_ends_failed_with_its_reason(client: OcrClient, docs: dict[str, Path]) -> None:
    job = client.submit(docs["encrypted"], model="pp-ocrv5")
    done = _wait(client, job["job_id"])
    assert (done["status"], done["error"]["code"]) == ("FAILED", "encrypted_pdf")


def test_duplicate_delivery_is_processed_once(client: OcrClient, local: stack.StackInfo, docs: dict[str, Path]) -> None:
    job = client.submit(docs["png"], model="pp-ocrv5")
    done = _wait(client, job["job_id"])
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    key = f"results/{job['job_id']}/result.json"
    first = s3.head_object(Bucket=local.bucket, Key=key)["LastModified"]
    message = {"job_id": job["job_id"], "model": "pp-ocrv5", "input": job["input"], "language": "en"}

    sqs.send_message(QueueUrl=local.queue_url, MessageBody=json.dumps(message))
    _wait_queue_drained(sqs, local.queue_url)
    # A barrier instead of a wait: the processor starts its async events first in first out, so once a job
    # submitted now has completed, a processor run the duplicate might have caused has started before it (and
    # finds the job COMPLETED, or its run held).
    sentinel = client.submit(docs["png"], model="pp-ocrv5")
    assert _wait(client, sentinel["job_id"])["status"] == "COMPLETED"

    again = client.status(job["job_id"])
    assert again["status"] == "COMPLETED" and again["finished_at"] == done["finished_at"]
    assert s3.head_object(Bucket=local.bucket, Key=key)["LastModified"] == first


def test_a_long_pdf_is_split_runs_in_chunks_with_live_progress_and_merges_in_page_order(
    client: OcrClient, local: stack.StackInfo, tmp_path: Path
) -> None:
    """20 pages read by OCR with the default 6 pages per chunk: four chunks, run by the processor's environments at
    once. (``text_layer: ignore``: with ``auto`` these born-digital pages would cost a tenth each and make two.)"""
    pages = [[f"Page {n} of 20", *ENGLISH_PAGES[n % 3][:2]] for n in range(1, 21)]
    job = client.submit(documents.write_vector_pdf(tmp_path / "long.pdf", pages), model="pp-ocrv5", options={"text_layer": "ignore"})
    progress: list[int] = []
    deadline = time.monotonic() + 300
    while (item := client.status(job["job_id"]))["status"] not in ("COMPLETED", "FAILED") and time.monotonic() < deadline:
        if item["status"] == "PROCESSING" and "page_count" in item:
            progress.append(item["pages_done"])
        time.sleep(0.1)

    assert (item["status"], item["page_count"], item["pages_done"], item["chunk_count"]) == ("COMPLETED", 20, 20, 4)
    assert any(0 < done < 20 for done in progress), f"no progress seen between 0 and 20 pages: {progress}"
    assert progress == sorted(progress)  # it only grows
    result = client.result(job["job_id"])
    assert [page["page"] for page in result["pages"]] == list(range(1, 21))
    for index, lines in enumerate(pages):
        assert _cer(result, index, lines) <= 0.02
    assert result["text"].split("\f")[12].startswith("Page 13 of 20")
    s3 = boto3.client("s3")
    # The last chunk deletes the partial results after it has completed the job: waited for, not sampled once.
    _wait_for(lambda: s3.list_objects_v2(Bucket=local.bucket, Prefix=f"chunks/{job['job_id']}/").get("KeyCount") == 0, 60,
              "the chunks' partial results to be deleted")


def _wait_queue_drained(sqs: Any, url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if queue_depth(sqs, url) == 0:
            return
        time.sleep(0.2)
    raise AssertionError("the OCR queue did not drain")


def test_vl_scales_out_from_zero_completes_through_the_success_topic_then_scales_in(client: OcrClient, local: stack.StackInfo, docs: dict[str, Path]) -> None:
    _wait_for(lambda: _desired(local) == 0, 60, "the endpoint to be idle at 0 instances")

    job = client.submit(docs["png"], model="paddleocr-vl")
    # Dispatched: PROCESSING (or already past it, on a machine that took its time to look).
    _wait_for(lambda: client.status(job["job_id"])["status"] in ("PROCESSING", "COMPLETED"), 60, "the VL job to be dispatched")
    # The local stack scales out asynchronously, as AWS does: waited for with a deadline, not sampled once. Nothing
    # can scale it back in before the idle window has passed with the job done.
    _wait_for(lambda: _desired(local) == 1, 60, "the endpoint to scale out to 1 instance")
    done = _wait(client, job["job_id"])

    assert (done["status"], done["backend"]) == ("COMPLETED", "sagemaker")
    result = client.result(job["job_id"])
    assert result["model"] == "paddleocr-vl" and "fallback" in result["engine"]["name"]
    # The stack's default version (OCR_VL_VERSION from PlatformConfig.endpoint_vl_version) is what was asked for.
    assert [(w["code"], w["requested"]) for w in done["warnings"]] == [("engine_fallback", "PaddleOCR-VL 1.6")]
    assert result["warnings"] == done["warnings"]
    assert _cer(result, 0, ENGLISH_PAGES[0]) <= 0.02
    # The isolated endpoint stores nothing: the completion function stored the page image from its answer.
    assert _result_keys(local, job["job_id"]) == {"result.json", "pages/00001.jpg"}
    _wait_for(lambda: _desired(local) == 0, IDLE_PERIODS * PERIOD_SECONDS + 30, "scale-in after the idle window")


def _result_keys(local: stack.StackInfo, job_id: str) -> set[str]:
    """The job's objects under ``results/{job_id}/``, relative to it."""
    prefix = f"results/{job_id}/"
    listing = boto3.client("s3").list_objects_v2(Bucket=local.bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"].removeprefix(prefix) for o in listing}


def test_vl_job_with_pdf_output_gets_its_searchable_pdf_and_page_images_from_the_isolated_endpoint(
    client: OcrClient, local: stack.StackInfo, tmp_path: Path
) -> None:
    """outputs: ["pdf"] on the GPU route: the endpoint (no AWS access) answers a ZIP with result.pdf and the page
    images, and the completion function stores them beside result.json and records result_pdf on the job."""
    from ocr_platform.core.text_metrics import word_f1

    scan = documents.write_image_pdf(tmp_path / "scan.pdf", ENGLISH_PAGES[:2])
    job = client.submit(scan, model="paddleocr-vl", options={"outputs": ["pdf"]})
    done = _wait(client, job["job_id"], timeout=300)

    assert (done["status"], done["backend"], done["page_count"]) == ("COMPLETED", "sagemaker", 2)
    location = f"s3://{local.bucket}/results/{job['job_id']}/result.pdf"
    assert done["result_pdf"] == location
    assert _result_keys(local, job["job_id"]) == {"result.json", "result.pdf", "pages/00001.jpg", "pages/00002.jpg"}
    searchable = tmp_path / "result.pdf"
    searchable.write_bytes(boto3.client("s3").get_object(Bucket=local.bucket, Key=f"results/{job['job_id']}/result.pdf")["Body"].read())
    result = client.result(job["job_id"])
    assert searchable.read_bytes().startswith(b"%PDF") and word_f1(result["text"], _pdf_text(searchable)) >= 0.98
    assert _cer(result, 1, ENGLISH_PAGES[1]) <= 0.02


def test_vl_route_failure_ends_failed_with_the_endpoint_error(client: OcrClient, local: stack.StackInfo, tmp_path: Path) -> None:
    notes = tmp_path / "notes.pdf"
    notes.write_text("not a pdf at all")
    job = client.submit(notes, model="paddleocr-vl")
    done = _wait(client, job["job_id"])
    assert (done["status"], done["error"]["code"]) == ("FAILED", "unsupported_type")


def test_cli_run_shows_the_transitions_and_writes_the_result(
    local: stack.StackInfo, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    assert cli.main(["run", str(docs["png"]), "--model", "pp-ocrv5", "--output", str(output)]) == 0

    err = capsys.readouterr().err
    assert "QUEUED" in err and "PROCESSING (lambda)" in err and "COMPLETED in" in err
    assert "read by OCR with PP-OCRv5 (1 page)" in err  # a scan: what read it is the engine
    assert f"sign in as {local.console_user}" in err and local.console_password in err  # how to open the console
    assert "Invoice 2026-0042" in err  # the text preview
    assert _cer(json.loads(output.read_text()), 0, ENGLISH_PAGES[0]) <= 0.02


def test_cli_run_of_the_quick_start_sample_says_its_text_layer_was_read(
    local: stack.StackInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's first command: a born-digital PDF, whose summary names its text layer, not an OCR engine."""
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    assert cli.main(["run", str(REPO / "samples" / "invoice.pdf"), "--model", "pp-ocrv6", "--output", str(output)]) == 0
    assert "read by text layer (1 page, no OCR)" in capsys.readouterr().err
    assert json.loads(output.read_text())["pages"][0]["text_source"] == "text_layer"


def test_cli_run_reads_a_word_file_and_its_pictures_through_the_stack(local: stack.StackInfo, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli
    from tests.office_documents import DOCX_PICTURES

    output = tmp_path / "result.json"
    assert cli.main(["run", str(DOCX_PICTURES), "--model", "pp-ocrv5", "--output", str(output)]) == 0

    assert "COMPLETED in" in capsys.readouterr().err
    result = json.loads(output.read_text())
    [page] = result["pages"]
    assert (result["document_type"], page["unit"], page["text_source"]) == ("docx", "document", "mixed")
    assert "powered" in result["text"].lower()


def test_cli_run_exits_non_zero_with_the_jobs_error(local: stack.StackInfo, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    assert cli.main(["run", str(docs["encrypted"]), "--model", "paddleocr-vl", "--output", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    # The first poll may already see PROCESSING (the invoker is quick when the endpoint is up): what a person
    # must see is the job's backend and its terminal state, then its error.
    assert "FAILED (sagemaker)" in err
    assert "error: encrypted_pdf: The PDF is password protected" in err
    assert not (tmp_path / "r.json").exists()


def test_cli_run_completes_a_document_with_a_corrupt_page_and_warns_about_it(
    local: stack.StackInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Page 3 of pikepdf's public four-page PDF damaged (``tests.documents.with_corrupt_pages``): the other
    three come back, and ``run`` says which page did not, after the result."""
    from ocr_platform.cli import commands as cli

    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(documents.with_corrupt_pages((REPO / "tests/documents/public/pikepdf-fourpages.pdf").read_bytes(), [3]))
    output = tmp_path / "result.json"

    assert cli.main(["run", str(damaged), "--model", "pp-ocrv5", "--output", str(output)]) == 0

    err = capsys.readouterr().err
    assert "COMPLETED in" in err and "3 page(s)" in err
    assert err.splitlines()[-1] == "warning: pages_failed: 1 of 4 pages could not be read (page 3); the result holds the other 3."
    result = json.loads(output.read_text())
    assert [page["page"] for page in result["pages"]] == [1, 2, 4] and [f["page"] for f in result["pages_failed"]] == [3]


def _pdf_text(path: Path) -> str:
    """The text pdfium extracts from ``path``, pages joined by form feeds (as result.json's ``text``)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return "\f".join(page.get_textpage().get_text_range() for page in pdf)
    finally:
        pdf.close()


@pytest.mark.parametrize(
    ("document", "text_layer", "source"),
    [(documents.write_born_digital_pdf, None, "text_layer"), (documents.write_image_pdf, "ignore", "ocr")],
    ids=["born-digital", "scan-text-layer-ignore"],
)
def test_cli_run_with_pdf_writes_a_searchable_pdf_of_the_result(
    local: stack.StackInfo, client: OcrClient, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    document: Any, text_layer: str | None, source: str,
) -> None:
    """``run --pdf``: the job writes results/{job_id}/result.pdf, records it on its item and in its completion
    event, and the CLI saves it; its text is the result's. ``result --pdf`` fetches it again, and answers a job
    submitted without --pdf with ``no_searchable_pdf`` (exit 4)."""
    from ocr_platform.cli import commands as cli
    from ocr_platform.core.text_metrics import word_f1

    source_pdf = document(tmp_path / "report.pdf") if text_layer is None else document(tmp_path / "scan.pdf", ENGLISH_PAGES[:2])
    output, searchable = tmp_path / "result.json", tmp_path / "out.pdf"
    argv = ["run", str(source_pdf), "--model", "pp-ocrv5", "--output", str(output), "--pdf", str(searchable)]
    assert cli.main(argv + (["--text-layer", text_layer] if text_layer else [])) == 0, capsys.readouterr().err

    result = json.loads(output.read_text(encoding="utf-8"))
    job_id = result["job_id"]
    assert result["page_count"] >= 2 and [page["text_source"] for page in result["pages"]] == [source] * result["page_count"]
    location = f"s3://{local.bucket}/results/{job_id}/result.pdf"
    assert client.status(job_id)["result_pdf"] == location
    assert searchable.read_bytes().startswith(b"%PDF")
    assert word_f1(result["text"], _pdf_text(searchable)) >= 0.98
    assert _recorded_events(local, job_id)[0]["detail"]["result_pdf"] == location

    again = tmp_path / "again.pdf"
    assert cli.main(["result", job_id, "--pdf", str(again)]) == 0
    assert again.read_bytes() == searchable.read_bytes()
    if text_layer is None:  # once is enough: a job without --pdf has none to give
        plain = client.submit(source_pdf, model="pp-ocrv5")
        assert _wait(client, plain["job_id"])["status"] == "COMPLETED"
        capsys.readouterr()
        assert cli.main(["result", plain["job_id"], "--pdf", str(tmp_path / "none.pdf")]) == 4
        assert "error: no_searchable_pdf" in capsys.readouterr().err
        assert not (tmp_path / "none.pdf").exists()


def test_cli_run_with_a_format_has_the_job_write_it_and_saves_it(
    local: stack.StackInfo, client: OcrClient, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``run --format textract``: the job asks for ``outputs: ["textract"]``, writes results/{job_id}/textract.json
    (on its item and in its completion event as ``formats``) and the CLI saves that file (default ./textract.json)."""
    from ocr_platform.cli import commands as cli

    page = tmp_path / "page.png"
    render_page(ENGLISH_PAGES[0]).save(page)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(tmp_path)
    try:
        assert cli.main(["run", str(page), "--model", "pp-ocrv5", "--format", "textract"]) == 0, capsys.readouterr().err
    finally:
        monkeypatch.undo()
    saved = json.loads((tmp_path / "textract.json").read_text(encoding="utf-8"))
    lines = [block["Text"] for block in saved["Blocks"] if block["BlockType"] == "LINE"]
    assert "Invoice 2026-0042" in lines
    [job] = [j for j in client.s3.list_objects_v2(Bucket=local.bucket, Prefix="results/").get("Contents", [])
             if j["Key"].endswith("/textract.json") and json.loads(client.s3.get_object(Bucket=local.bucket, Key=j["Key"])["Body"].read()) == saved]
    job_id = job["Key"].split("/")[1]
    location = f"s3://{local.bucket}/results/{job_id}/textract.json"
    assert client.status(job_id)["formats"] == {"textract": location}
    assert _recorded_events(local, job_id)[0]["detail"]["formats"] == {"textract": location}


def test_a_file_dropped_in_the_inbox_with_the_aws_cli_becomes_one_completed_job(client: OcrClient, local: stack.StackInfo) -> None:
    """``aws s3 cp`` into ``inbox/pp-ocrv5/`` and nothing else: S3's EventBridge event, the stack's rule and the
    ingest function make the job; its id is found from the object, as ``ocr-platform status s3://...`` does."""
    aws = str(Path(sys.executable).parent / "aws")
    dropped = f"s3://{local.bucket}/inbox/pp-ocrv5/invoice.pdf"
    subprocess.run([aws, "s3", "cp", str(REPO / "samples" / "invoice.pdf"), dropped], check=True, capture_output=True, timeout=120)
    job_id = client.inbox_job_id(dropped)
    _wait_for(lambda: client.store.get(job_id) is not None, 60, "the dropped file's job")
    done = _wait(client, job_id)

    assert (done["status"], done["model"], done["file_name"]) == ("COMPLETED", "pp-ocrv5", "invoice.pdf")
    assert done["input"] == f"s3://{local.bucket}/documents/{job_id}/invoice.pdf"
    assert "Invoice 2026-0042" in client.result(job_id)["text"]

    loose = f"s3://{local.bucket}/inbox/invoice.pdf"
    subprocess.run([aws, "s3", "cp", str(REPO / "samples" / "invoice.pdf"), loose], check=True, capture_output=True, timeout=120)
    loose_id = client.inbox_job_id(loose)
    _wait_for(lambda: client.store.get(loose_id) is not None, 60, "the loose file's job")
    failed = _wait(client, loose_id)
    assert (failed["status"], failed["error"]["code"]) == ("FAILED", "invalid_inbox_key")


def _status(local: stack.StackInfo, email: str) -> str:
    return str(boto3.client("cognito-idp").admin_get_user(UserPoolId=local.user_pool_id, Username=email)["UserStatus"])


def _expired(token: str) -> str:
    """The same token, expired an hour ago, signed with the key that signed it (moto's)."""
    import gzip

    import moto.cognitoidp
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    private = (Path(moto.cognitoidp.__file__).parent / "resources" / "jwks-private.json.gz").read_bytes()
    key = RSAKey.import_key(json.loads(gzip.decompress(private)))
    claims = {**jwt.decode(token, key).claims, "exp": int(time.time()) - 3600}
    return jwt.encode({"alg": "RS256", "kid": "dummy"}, claims, key)


def test_the_jobs_api_runs_a_users_upload_and_shows_it_to_that_user_only(local: stack.StackInfo) -> None:
    """Through the local HTTP API and its JWT authorizer: sign in, create a job, upload with the presigned
    form, watch it complete, fetch the result link; the other user and bad tokens get nothing."""
    import requests

    api = local.api_url
    alice, bob = _id_token(local, "alice@example.com"), _id_token(local, "bob@example.com")

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    for headers in ({}, bearer("not-a-token"), bearer(_expired(alice))):
        refused = requests.get(f"{api}/jobs", headers=headers, timeout=30)
        assert (refused.status_code, refused.json()) == (401, {"message": "Unauthorized"})

    created = requests.post(f"{api}/jobs", json={"filename": "invoice.pdf", "model": "pp-ocrv5"}, headers=bearer(alice), timeout=30)
    assert created.status_code == 201, created.text
    job_id, form = created.json()["job_id"], created.json()["upload"]
    document = (REPO / "samples" / "invoice.pdf").read_bytes()
    # The form holds only for its key, type and size, as S3 enforces it.
    for tampered, size, status in (({"key": "documents/elsewhere.pdf"}, 1, 403), ({"Content-Type": "text/html"}, 1, 403),
                                   ({}, 201 * 1024 * 1024, 400)):
        refused = requests.post(form["url"], data={**form["fields"], **tampered}, timeout=120,
                                files={"file": ("invoice.pdf", document if size == 1 else b"\0" * size)})
        assert refused.status_code == status, (tampered, refused.text)
    assert boto3.client("s3").list_objects_v2(Bucket=local.bucket, Prefix="documents/elsewhere").get("KeyCount") == 0
    uploaded = requests.post(form["url"], data=form["fields"], timeout=60, files={"file": ("invoice.pdf", document)})
    assert uploaded.status_code == 204, uploaded.text

    deadline = time.monotonic() + 180
    while (job := requests.get(f"{api}/jobs/{job_id}", headers=bearer(alice), timeout=30).json())["status"] not in ("COMPLETED", "FAILED"):
        assert time.monotonic() < deadline, f"the API job is still {job['status']}"
        time.sleep(0.5)
    assert (job["status"], job["file_name"], job["page_count"]) == ("COMPLETED", "invoice.pdf", 1)
    link = requests.get(f"{api}/jobs/{job_id}/result", headers=bearer(alice), timeout=30).json()
    result = requests.get(link["result"], timeout=30).json()
    assert "Invoice 2026-0042" in result["text"]
    [page] = link["pages"]  # the page as the engine read it: the result's polygons are in its pixels
    image = requests.get(page["image"], timeout=30)
    assert (page["page"], image.headers["Content-Type"], image.content[:3]) == (1, "image/jpeg", b"\xff\xd8\xff")

    assert [j["job_id"] for j in requests.get(f"{api}/jobs", headers=bearer(alice), timeout=30).json()["jobs"]] == [job_id]
    assert requests.get(f"{api}/jobs", headers=bearer(bob), timeout=30).json() == {"jobs": [], "next": None}
    for path in (f"/jobs/{job_id}", f"/jobs/{job_id}/result"):
        assert requests.get(f"{api}{path}", headers=bearer(bob), timeout=30).status_code == 404


def test_a_long_vl_job_is_split_into_chunk_requests_and_its_instance_stays_while_they_run(
    client: OcrClient, local: stack.StackInfo, tmp_path: Path
) -> None:
    """15 pages with the default 10 pages per GPU chunk: the endpoint answers with a split plan, the completion
    function sends two chunk requests, and the second's result merges the job; the idle window passes meanwhile."""
    from tests.documents import write_image_pdf

    long_document = write_image_pdf(tmp_path / "long.pdf", ENGLISH_PAGES * 5)
    _wait_for(lambda: _desired(local) == 0, 60, "the endpoint to be idle at 0 instances")
    job = client.submit(long_document, model="paddleocr-vl")
    desired_while_running, progress = [], []
    deadline = time.monotonic() + 600
    while (item := client.status(job["job_id"]))["status"] not in ("COMPLETED", "FAILED"):
        assert time.monotonic() < deadline, f"the 15-page VL job is still {item['status']} after 600 s"
        if item["status"] == "PROCESSING":
            desired_while_running.append(_desired(local))
            if "page_count" in item:
                progress.append((item["page_count"], item["pages_done"]))
        time.sleep(0.2)

    assert (item["status"], item["page_count"], item["pages_done"], item["chunk_count"]) == ("COMPLETED", 15, 15, 2)
    assert (15, 10) in progress, f"the first chunk's 10 pages were never seen done: {sorted(set(progress))}"
    result = client.result(job["job_id"])
    assert [page["page"] for page in result["pages"]] == list(range(1, 16))
    assert _cer(result, 12, ENGLISH_PAGES[0]) <= 0.02  # page 13, read by the second chunk
    seconds = (datetime.fromisoformat(item["finished_at"]) - datetime.fromisoformat(item["started_at"])).total_seconds()
    assert seconds > IDLE_PERIODS * PERIOD_SECONDS  # the idle window passed while the job ran...
    # ...and the instance stayed: once scaled out (a write the stack makes beside PROCESSING, in its own time) it never
    # went back to 0 while the job ran
    assert 1 in desired_while_running and set(desired_while_running[desired_while_running.index(1):]) == {1}, desired_while_running
    s3 = boto3.client("s3")
    # The last chunk deletes the partial results after it has completed the job: waited for, not sampled once.
    _wait_for(lambda: s3.list_objects_v2(Bucket=local.bucket, Prefix=f"chunks/{job['job_id']}/").get("KeyCount") == 0, 60,
              "the chunks' partial results to be deleted")
    # Every request (the job's, each chunk's) named the uploaded document: no request object, no copy of it.
    assert s3.list_objects_v2(Bucket=local.bucket, Prefix=f"async/requests/{job['job_id']}").get("KeyCount") == 0
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=local.bucket, Prefix=f"documents/{job['job_id']}/")["Contents"]] == [
        f"documents/{job['job_id']}/long.pdf"]
    # Each chunk's page images, stored by the completion function from its answer.
    assert _result_keys(local, job["job_id"]) == {"result.json"} | {f"pages/{page:05d}.jpg" for page in range(1, 16)}
    _wait_for(lambda: _desired(local) == 0, IDLE_PERIODS * PERIOD_SECONDS + 30, "scale-in once idle")


def test_a_message_the_invoker_cannot_process_goes_to_the_dlq_and_its_job_fails(client: OcrClient, local: stack.StackInfo) -> None:
    """With the jobs table gone every receive fails; after 3 receives SQS moves the message to the DLQ,
    whose consumer archives it and, once the table is back, fails the job ``dead_lettered``."""
    dynamodb, sqs, s3 = boto3.client("dynamodb"), boto3.client("sqs"), boto3.client("s3")
    dynamodb.delete_table(TableName=local.table)
    try:
        body = json.dumps({"job_id": "poison-1", "model": "pp-ocrv5", "input": f"s3://{local.bucket}/documents/poison-1/a.png"})
        sqs.send_message(QueueUrl=local.queue_url, MessageBody=body)
        _wait_for(lambda: s3.list_objects_v2(Bucket=local.bucket, Prefix="dead-letters/").get("KeyCount", 0) > 0, 60, "the DLQ consumer to archive the message")
    finally:
        create_jobs_table(dynamodb, local.table)
    [archived] = s3.list_objects_v2(Bucket=local.bucket, Prefix="dead-letters/")["Contents"]
    record = json.loads(s3.get_object(Bucket=local.bucket, Key=archived["Key"])["Body"].read())
    assert json.loads(record["body"])["job_id"] == "poison-1"
    assert int(record["attributes"]["ApproximateReceiveCount"]) >= 1
    _wait_for(lambda: (client.store.get("poison-1") or {}).get("status") == "FAILED", 60, "the dead-lettered job to fail")
    assert client.status("poison-1")["error"]["code"] == "dead_lettered"


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")




@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by Selenium; the test skips with one line where either is missing."""
    yield from chromium(window="1400x1000", extra_flags=QUIET_FLAGS)


def _alert(browser: Any, element_id: str, text: str) -> str:
    """The text of the visible message ``element_id`` once it contains ``text``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def shown(driver: Any) -> str | bool:
        element = driver.find_element(By.ID, element_id)
        return element.is_displayed() and text in element.text and element.text

    return str(WebDriverWait(browser, 30).until(shown, f"no {element_id} saying {text!r}"))


def test_the_console_signs_a_freshly_invited_user_in_through_the_new_password_step(
    client: OcrClient, local: stack.StackInfo, browser: Any
) -> None:
    """An administrator invites a user with a temporary password (Cognito keeps them FORCE_CHANGE_PASSWORD); in
    the console a wrong password is refused, the temporary one leads to the new-password step with the pool's
    rules, a password that breaks them and an expired step say so, and the user's own password signs them in:
    they upload a file and see its job, and sign in later with that password alone."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 180)
    email = "invited@example.com"
    _invite(local, email)
    _open_console(browser, local)

    _sign_in(browser, email, "Not-the-password-1!")
    assert _alert(browser, "sign-in-error", "Wrong e-mail address or password")
    _sign_in(browser, email, TEMPORARY_PASSWORD)
    wait.until(ready.visibility_of_element_located((By.ID, "new-password-view")))
    rules = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#password-rules li")]
    assert rules[0] == "at least 12 characters" and len(rules) == 5, rules  # the pool's policy, from config.json
    assert not browser.find_element(By.ID, "jobs-view").is_displayed()

    _choose_password(browser, "short")  # Cognito's InvalidPasswordException
    assert _alert(browser, "new-password-error", "does not follow the rules")
    browser.find_element(By.ID, "new-password").clear()
    browser.find_element(By.ID, "confirm-password").clear()
    _choose_password(browser, PASSWORD, repeated=PASSWORD + "x")
    assert _alert(browser, "new-password-error", "The two passwords differ")
    assert _status(local, email) == "FORCE_CHANGE_PASSWORD"

    # A session Cognito no longer knows, as after the challenge's few minutes (moto keeps sessions for ever).
    browser.execute_script("state.challenge.session = 'AYABeExpiredSession'")
    browser.find_element(By.ID, "new-password").clear()
    browser.find_element(By.ID, "confirm-password").clear()
    _choose_password(browser, PASSWORD)
    assert _alert(browser, "sign-in-error", "Sign in again with your temporary password")
    assert _status(local, email) == "FORCE_CHANGE_PASSWORD"

    _sign_in(browser, email, TEMPORARY_PASSWORD)
    _choose_password(browser, PASSWORD)
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))
    assert browser.find_element(By.ID, "who").text == email
    assert _status(local, email) == "CONFIRMED"

    browser.find_element(By.ID, "files").send_keys(str(REPO / "samples" / "invoice.pdf"))
    row = wait.until(ready.presence_of_element_located((By.XPATH, "//tr[td[normalize-space()='invoice.pdf' or a[text()='invoice.pdf']]]")))
    job_id = row.get_attribute("data-job-id")
    sub = next(a["Value"] for a in boto3.client("cognito-idp").admin_get_user(
        UserPoolId=local.user_pool_id, Username=email)["UserAttributes"] if a["Name"] == "sub")
    assert client.status(job_id)["owner"] == sub

    browser.find_element(By.ID, "sign-out").click()
    _sign_in(browser, email, PASSWORD)  # the user's own password now: no new-password step
    wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, f"tr[data-job-id='{job_id}']")))
    assert not browser.find_element(By.ID, "new-password-view").is_displayed()


def test_the_console_renews_an_expired_id_token_and_returns_to_sign_in_when_it_cannot(
    local: stack.StackInfo, browser: Any
) -> None:
    """The ID token's exp has passed: the console gets a new one with the refresh token (REFRESH_TOKEN_AUTH) and
    says so; a token the API refuses (401) is renewed the same way; when Cognito refuses the refresh token too,
    the console is back at the sign-in form saying the session has expired."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    email = "renewed@example.com"
    _invite(local, email)
    _open_console(browser, local)
    _sign_in(browser, email, TEMPORARY_PASSWORD)
    _choose_password(browser, PASSWORD)
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))
    signed_in = browser.execute_script("return sessionStorage.getItem('idToken')")

    def reload_with(id_token: str, refresh_token: str | None = None) -> None:
        browser.execute_script("sessionStorage.setItem('idToken', arguments[0]);"
                               "if (arguments[1]) sessionStorage.setItem('refreshToken', arguments[1]);", id_token, refresh_token)
        browser.refresh()

    def id_token() -> str:
        return str(browser.execute_script("return sessionStorage.getItem('idToken')"))

    reload_with(_expired(signed_in))
    assert _alert(browser, "session-note", "Your sign-in had expired; it was renewed")
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))
    renewed = id_token()
    assert renewed != _expired(signed_in) and _api_status(local, renewed) == 200

    refused = signed_in[:-6] + ("AAAAAA" if not signed_in.endswith("AAAAAA") else "BBBBBB")  # exp ahead, signature wrong
    assert _api_status(local, refused) == 401
    reload_with(refused)
    wait.until(lambda driver: id_token() != refused)
    assert _api_status(local, id_token()) == 200
    assert browser.find_element(By.ID, "jobs-view").is_displayed()

    reload_with(_expired(signed_in), "a-refresh-token-cognito-refuses")
    assert _alert(browser, "sign-in-error", "Your session has expired. Sign in again.")
    assert not browser.find_element(By.ID, "jobs-view").is_displayed()
    assert browser.execute_script("return sessionStorage.getItem('refreshToken')") is None


def _api_status(local: stack.StackInfo, id_token: str) -> int:
    """What the jobs API answers ``GET /jobs`` with this ID token."""
    import requests

    return requests.get(f"{local.api_url}/jobs", headers={"Authorization": f"Bearer {id_token}"}, timeout=30).status_code


def test_the_console_signs_in_uploads_and_draws_the_result_over_its_page(
    client: OcrClient, local: stack.StackInfo, browser: Any, tmp_path: Path
) -> None:
    """In headless Chromium against the local stack: sign in, drop a sample with "Searchable PDF" ticked, see it
    complete, open it, count the overlay's polygons against the result's lines, fetch its result.pdf by the
    page's link and have its ALTO file made by its download link; a bad file shows its job's error."""
    import urllib.request

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 180)
    # The local user, invited with the temporary password `local up` prints: the first sign-in asks for a new one.
    _open_console(browser, local)
    _sign_in(browser, local.console_user, local.console_password)
    _choose_password(browser, PASSWORD)
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))

    browser.find_element(By.ID, "searchable-pdf").click()
    browser.find_element(By.ID, "files").send_keys(str(REPO / "samples" / "invoice.pdf"))
    link = wait.until(ready.element_to_be_clickable((By.XPATH, "//tr[td[contains(@class,'status-COMPLETED')]]//a[text()='invoice.pdf']")))
    job_id = link.find_element(By.XPATH, "./ancestor::tr").get_attribute("data-job-id")
    link.click()
    wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#page-holder svg polygon.line"))
    result = client.result(job_id)
    polygons = browser.find_elements(By.CSS_SELECTOR, "#page-holder svg polygon.line")
    assert len(polygons) == len(result["pages"][0]["lines"]) > 0
    assert "Invoice 2026-0042" in browser.find_element(By.ID, "text").text
    pdf_link = browser.find_element(By.LINK_TEXT, "Download result.pdf")
    with urllib.request.urlopen(pdf_link.get_attribute("href"), timeout=30) as answer:
        assert answer.read().startswith(b"%PDF")
    assert client.status(job_id)["result_pdf"] == f"s3://{local.bucket}/results/{job_id}/result.pdf"
    image = browser.find_element(By.CSS_SELECTOR, "#page-holder img")
    wait.until(lambda driver: driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image))
    browser.save_screenshot(str(tmp_path / "console-result.png"))
    if os.environ.get("OCR_CONSOLE_SCREENSHOT"):  # refreshes the README's picture
        shutil.copy(tmp_path / "console-result.png", os.environ["OCR_CONSOLE_SCREENSHOT"])
    # A format the job did not ask for is made from its result.json when its download is clicked.
    assert not client.s3.list_objects_v2(Bucket=local.bucket, Prefix=f"results/{job_id}/result.alto.xml").get("KeyCount")
    browser.find_element(By.LINK_TEXT, "Download result.alto.xml").click()
    wait.until(lambda driver: client.s3.list_objects_v2(Bucket=local.bucket, Prefix=f"results/{job_id}/result.alto.xml").get("KeyCount"))

    browser.get(f"{local.console_url}/#/")
    notes = tmp_path / "notes.pdf"
    notes.write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(range(256)) * 8)  # audio named .pdf: no route reads it
    # The jobs view shown, not the file input merely present: the console listens for a chosen file only once its
    # script has read config.json, which on a busy machine comes after the static page is in place.
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))
    browser.find_element(By.ID, "files").send_keys(str(notes))
    failed = wait.until(ready.visibility_of_element_located((By.XPATH, "//tr[td[text()='notes.pdf']]/td[contains(@class,'status-FAILED')]")))
    assert "unsupported_type" in failed.text


# ----- results that come to you: completion events, webhooks, input by URL -------------------------------


def _secret(local: stack.StackInfo) -> bytes:
    arn = local.resources["webhook_secret_arn"]
    return str(boto3.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]).encode()


_RECORDED: dict[str, list[dict[str, Any]]] = {}


def _recorded_events(local: stack.StackInfo, job_id: str, *, at_least: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
    """The completion events of ``job_id`` that the local stack's recording rule put on its queue."""
    sqs = boto3.client("sqs")
    deadline = time.monotonic() + timeout
    while len(_RECORDED.get(job_id, [])) < at_least:
        assert time.monotonic() < deadline, f"no completion event recorded for {job_id}"
        for message in sqs.receive_message(QueueUrl=local.resources["job_events_url"], MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
            event = json.loads(message["Body"])
            _RECORDED.setdefault(event["detail"]["job_id"], []).append(event)
            sqs.delete_message(QueueUrl=local.resources["job_events_url"], ReceiptHandle=message["ReceiptHandle"])
    return _RECORDED[job_id]


def _documented_event_fields() -> tuple[set[str], set[str]]:
    """(every detail field, the fields present "always") from the README-linked contracts' event table."""
    text = (REPO / "docs" / "contracts.md").read_text(encoding="utf-8").split("## Completion events", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:4] for line in text.splitlines() if line.startswith("| `") and line.count("|") >= 5]
    fields, always = set(), set()
    for name_cell, _type, present in rows:
        names = {n.strip(" `") for n in name_cell.split("/")}
        fields |= names
        if present.strip() == "always":
            always |= names
    return fields, always


def test_cli_run_with_a_callback_url_gets_one_signed_post_and_one_recorded_event(
    local: stack.StackInfo, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    with WebhookReceiver() as hook:
        assert cli.main(["run", str(docs["png"]), "--model", "pp-ocrv5", "--output", str(output), "--callback-url", hook.url]) == 0
        assert "webhook delivered after 1 attempt(s) (HTTP 200)" in capsys.readouterr().err
        job_id = json.loads(output.read_text())["job_id"]
        [post] = hook.wait_for(1)
        assert post.signed_by(_secret(local)) and not post.signed_by(b"another secret")
        detail = json.loads(post.body)
        assert (detail["job_id"], detail["status"], detail["page_count"]) == (job_id, "COMPLETED", 1)
        assert detail["result"] == f"s3://{local.bucket}/results/{job_id}/result.json"
        assert post.headers["X-OCR-Event-Id"] == detail["event_id"] and post.headers["X-OCR-Delivery-Attempt"] == "1"

        # The event, as the stack's recording rule got it, is the documented schema, with the webhook's detail.
        [event] = _recorded_events(local, job_id)
        assert (event["source"], event["detail-type"]) == ("ocr-platform", "OCR Job Completed")
        assert event["detail"] == detail
        documented, always = _documented_event_fields()
        assert always <= set(detail) <= documented, (set(detail) - documented, always - set(detail))

        # Duplicates of the job's message and of the webhook request change nothing: still one POST.
        sqs = boto3.client("sqs")
        item = OcrClient(PlatformResources(local.bucket, local.queue_url, local.table)).status(job_id)
        sqs.send_message(QueueUrl=local.queue_url, MessageBody=json.dumps(
            {"job_id": job_id, "model": "pp-ocrv5", "input": item["input"], "callback_url": hook.url}))
        sqs.send_message(QueueUrl=local.resources["webhook_queue_url"], MessageBody=json.dumps(
            {"job_id": job_id, "event_id": detail["event_id"], "callback_url": hook.url, "detail": detail}))
        _wait_queue_drained(sqs, local.queue_url)
        _wait_queue_drained(sqs, local.resources["webhook_queue_url"])
        time.sleep(1.0)
        assert len(hook.posts) == 1
        item = OcrClient(PlatformResources(local.bucket, local.queue_url, local.table)).status(job_id)
        assert item["callback_status"] == "delivered" and [a["status_code"] for a in item["callback_attempts"]] == [200]


def test_cli_run_says_each_failed_webhook_attempt_and_how_the_delivery_ended(
    local: stack.StackInfo, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``run --callback-url`` is not silent while the stack retries a webhook: one line per failed attempt, then the end."""
    from ocr_platform.cli import commands as cli

    with WebhookReceiver(fail_first=2) as hook:
        argv = ["run", str(docs["png"]), "--model", "pp-ocrv5", "--output", str(tmp_path / "result.json"), "--callback-url", hook.url]
        assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert "webhook attempt 1 failed (500); the stack retries it" in err and "webhook attempt 2 failed (500)" in err
    assert "webhook attempt 3" not in err and "webhook delivered after 3 attempt(s) (HTTP 200)" in err


def test_a_receiver_that_fails_twice_gets_the_third_attempt_of_the_same_event(client: OcrClient, local: stack.StackInfo, docs: dict[str, Path]) -> None:
    with WebhookReceiver(fail_first=2) as hook:
        job = client.submit(docs["png"], model="pp-ocrv5", callback_url=hook.url)
        assert _wait(client, job["job_id"])["status"] == "COMPLETED"
        posts = hook.wait_for(3)
        _wait_for(lambda: client.status(job["job_id"]).get("callback_status") == "delivered", 30, "the delivery's record")
    assert [p.headers["X-OCR-Delivery-Attempt"] for p in posts] == ["1", "2", "3"]
    assert len({p.body for p in posts}) == 1 and len({p.headers["X-OCR-Event-Id"] for p in posts}) == 1
    assert all(p.signed_by(_secret(local)) for p in posts)
    assert posts[1].at - posts[0].at >= 0.9  # the schedule's first wait, 1 s here
    attempts = client.status(job["job_id"])["callback_attempts"]
    assert [(a["attempt"], a.get("status_code")) for a in attempts] == [(1, 500), (2, 500), (3, 200)]


def test_a_receiver_that_stays_down_is_dead_lettered_with_every_attempt_recorded(client: OcrClient, local: stack.StackInfo) -> None:
    body = json.dumps({"job_id": "hook-down-1", "model": "pp-ocrv5", "input": f"s3://{local.bucket}/documents/hook-down-1/missing.png"})
    with receiver_that_is_down() as url:
        boto3.client("sqs").send_message(QueueUrl=local.queue_url, MessageBody=json.dumps({**json.loads(body), "callback_url": url}))
        _wait_for(lambda: client.store.get("hook-down-1") is not None, 60, "the message's job")
        failed = _wait(client, "hook-down-1")
        assert (failed["status"], failed["error"]["code"]) == ("FAILED", "input_not_found")
        _wait_for(lambda: client.status("hook-down-1").get("callback_status") == "dead_lettered", 60, "the webhook to be dead-lettered")
    attempts = client.status("hook-down-1")["callback_attempts"]
    assert len(attempts) >= 3 and all("error" in a and "status_code" not in a for a in attempts)
    assert [a["attempt"] for a in attempts] == list(range(1, len(attempts) + 1))
    # The deliverer parks the request on the DLQ after it has recorded dead_lettered: waited for, not read once.
    dlq: list[dict[str, Any]] = []
    _wait_for(lambda: bool(dlq.extend(boto3.client("sqs").receive_message(
        QueueUrl=local.resources["webhook_dlq_url"], MessageAttributeNames=["All"], WaitTimeSeconds=1,
    ).get("Messages", [])) or dlq), 60, "the request on the webhook DLQ")
    [parked] = dlq
    assert json.loads(parked["Body"])["job_id"] == "hook-down-1"
    assert int(parked["MessageAttributes"]["Attempts"]["StringValue"]) == len(attempts)
    assert _recorded_events(local, "hook-down-1")[0]["detail-type"] == "OCR Job Failed"


@pytest.fixture
def document_server(docs: dict[str, Path]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving the test documents, and answering 404 for anything else."""
    from tests.local.folder_server import serving

    with serving(docs["png"].parent) as url:
        yield url


def test_a_document_submitted_by_url_is_fetched_once_and_read_like_an_upload(client: OcrClient, local: stack.StackInfo, document_server: str) -> None:
    job = client.submit(f"{document_server}/digital.pdf", model="pp-ocrv5")
    done = _wait(client, job["job_id"])
    assert done["status"] == "COMPLETED", done.get("error")
    assert done["input_url"] == f"{document_server}/digital.pdf"
    assert done["input"] == f"s3://{local.bucket}/documents/{job['job_id']}/digital.pdf"
    assert _cer(client.result(job["job_id"]), 0, ENGLISH_PAGES[0]) <= 0.02

    missing = client.submit(f"{document_server}/nowhere.pdf", model="pp-ocrv5")
    failed = _wait(client, missing["job_id"])
    assert (failed["status"], failed["error"]["code"]) == ("FAILED", "input_unreachable")
    assert "404" in failed["error"]["message"]



def test_cli_run_does_not_fail_a_completed_job_it_cannot_save(
    local: stack.StackInfo, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The job COMPLETED but reading its result back fails (here S3 refuses the GET): ``run`` exits 0 and says where
    the result is and how to save it, instead of a traceback after the work was done."""
    from botocore.exceptions import ClientError

    from ocr_platform.cli import commands as cli
    from ocr_platform.cli.client import OcrClient

    def refused(self: OcrClient, job_id: str, fmt: str) -> bytes:
        raise ClientError({"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."}}, "GetObject")

    monkeypatch.setattr(OcrClient, "formatted", refused)
    assert cli.main(["run", str(docs["png"]), "--model", "pp-ocrv5", "--output", str(tmp_path / "result.json")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "warning: aws_error: GetObject failed (SlowDown" in err
    job_id = err.split("job ", 1)[1].split(":", 1)[0]
    assert f"job {job_id} COMPLETED: its result is s3://{local.bucket}/results/{job_id}/result.json" in err
    assert f"ocr-platform result {job_id} --output FILE" in err
