"""Office and HTML files end to end on the CPU route, with the real PP-OCRv5 reading their embedded pictures.

Each kind comes in a different way: a DOCX by SQS message, a PPTX through the drop folder, an XLSX through the
jobs API's upload, an HTML page by URL, a DOCX on the command line; the bad inputs through the processor, and a
``paddleocr-vl`` job of a DOCX at the endpoint."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from ocr_platform.engines.reading import ocr_document
from ocr_platform.jobs.store import NewJob
from tests import office_documents as od
from tests.conftest import BUCKET, Platform
from tests.result_schema import assert_valid_result


def _blocks(page: dict[str, Any], label: str) -> list[dict[str, Any]]:
    return [block for block in page["blocks"] if block["label"] == label]


def _no_geometry(result: dict[str, Any]) -> None:
    for page in result["pages"]:
        assert (page["width"], page["height"], page["scale"]) == (0, 0, 0.0)
        assert page["lines"] and all("polygon" not in line for line in page["lines"])
        assert all("bbox" not in block for block in page["blocks"])


def test_a_docx_by_sqs_message_has_its_pictures_read_where_they_stand(platform: Platform, ppocr) -> None:
    uri = platform.put_document("job-docx", "report.docx", od.DOCX_PICTURES.read_bytes())
    platform.enqueue({"job_id": "job-docx", "model": "pp-ocrv5", "input": uri})

    result = platform.run_queued_job()

    assert result["document_type"] == "docx"
    [page] = result["pages"]
    assert (page["unit"], page["text_source"]) == ("document", "mixed")
    pictures = _blocks(page, "image")
    assert len(pictures) == 5  # three pictures, two of them placed twice: each placement keeps its text
    assert "python" in pictures[0]["text"].lower() and "powered" in pictures[2]["text"].lower()
    assert "<img" not in page["markdown"] and "powered" in page["markdown"]
    assert result["timings"]["picture_ocr"] > 0
    _no_geometry(result)
    job = platform.job("job-docx")
    assert (job["status"], job["document_type"], job["page_count"]) == ("COMPLETED", "docx", 1)
    assert not any(key.startswith("results/job-docx/pages/") for key in platform.keys("results/"))  # no page images


def test_a_pptx_dropped_in_the_inbox_is_one_page_per_slide(platform: Platform, ppocr) -> None:
    key = "inbox/pp-ocrv5/deck.pptx"
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=od.PPTX_MIXED.read_bytes())
    assert platform.run_ingest(key)["outcome"] == "queued"

    result = platform.run_queued_job()

    [slide] = result["pages"]
    assert (result["document_type"], slide["unit"], slide["text_source"]) == ("pptx", "slide", "mixed")
    [table] = _blocks(slide, "table")
    assert table["text"] == "Col head 1\tCol head 2\nCell text 1\tCell text 2"
    assert table["html"].startswith("<table>") and table["html"] in slide["markdown"]
    assert "Group test text" in result["text"] and "python" in result["text"].lower()


def test_slides_read_alone_with_a_page_selection(ppocr) -> None:
    result, raw = ocr_document(od.PPTX_PICTURES, job_id="j", model="pp-ocrv5", engine=ppocr, pages="1")
    [slide] = result["pages"]
    assert (slide["page"], slide["unit"], raw["unit"]) == (1, "slide", "slide")
    assert "python" in slide["markdown"].lower() and "powered" in slide["markdown"].lower()


def test_an_xlsx_uploaded_through_the_jobs_api_is_a_sheet_with_its_picture_read(platform: Platform, ppocr, tmp_path: Path) -> None:
    from tests.handlers.test_api import ALICE, call

    status, created = call("POST", "/jobs", ALICE, body={"filename": "book.xlsx", "model": "pp-ocrv5"})
    assert status == 201
    form = created["upload"]
    data = od.xlsx_with_picture(tmp_path / "book.xlsx").read_bytes()
    assert requests.post(form["url"], data=form["fields"], files={"file": ("book.xlsx", data)}, timeout=30).status_code == 204
    assert platform.run_ingest(form["fields"]["key"])["outcome"] == "queued"

    result = platform.run_queued_job()

    [sheet] = result["pages"]
    assert (sheet["unit"], sheet["name"], sheet["text_source"]) == ("sheet", "Sheet1", "mixed")
    [table] = _blocks(sheet, "table")
    rows = [row.split("\t") for row in table["text"].split("\n")]
    assert [row[0] for row in rows] == ["1", "2", "3"] and "python" in rows[0][2].lower()  # the picture's text in its cell, C1
    status, job = call("GET", f"/jobs/{created['job_id']}", ALICE)
    assert (job["status"], job["document_type"]) == ("COMPLETED", "xlsx")


def test_an_xlsx_without_pictures_is_native(ppocr) -> None:
    result, _ = ocr_document(od.XLSX_TEXT, job_id="j", model="pp-ocrv5", engine=ppocr)
    [sheet] = result["pages"]
    assert (sheet["text_source"], result["timings"]["picture_ocr"], result["engine"]["models"]) == ("native", 0.0, [])  # no model ran
    assert _blocks(sheet, "table")[0]["html"].startswith("<table>")


@pytest.fixture
def html_site(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str]]]:
    """A web server on 127.0.0.1 with an HTML page (``/report``) that points at a picture on the same server, and the
    paths it was asked for; the invoker is allowed to fetch from it."""
    from ocr_platform.core.settings import ENV
    from ocr_platform.handlers import _services

    requested: list[str] = []
    holder: dict[str, bytes] = {}

    class Site(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            requested.append(self.path)
            body = holder["page"] if self.path == "/report" else b""
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    site = f"http://127.0.0.1:{server.server_address[1]}"
    holder["page"] = od.html_with_picture(remote=f"{site}/chart.png")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(ENV.URL_POLICY, "local")
    _services.services.cache_clear()
    try:
        yield site, requested
    finally:
        server.shutdown()
        server.server_close()
        _services.services.cache_clear()


def test_an_html_page_by_url_is_read_without_running_or_fetching_anything(platform: Platform, ppocr, html_site) -> None:  # noqa: ANN001
    site, requested = html_site
    platform.enqueue({"job_id": "job-html", "model": "pp-ocrv5", "input": f"{site}/report"})

    result = platform.run_queued_job()

    assert requested == ["/report"]  # the remote picture was never fetched
    assert platform.job("job-html")["file_name"] == "report.html"
    [page] = result["pages"]
    assert (result["document_type"], page["unit"], page["text_source"]) == ("html", "document", "mixed")
    assert [b["label"] for b in page["blocks"]] == ["doc_title", "text", "image", "text", "text", "list"]
    assert "python" in _blocks(page, "image")[0]["text"].lower()
    lines = page["markdown"].splitlines()
    assert lines[0] == "# Quarterly report" and lines.index("Read before the picture.") < lines.index("Read after the picture.")
    assert "script ran" not in result["text"] and "remote chart" in result["text"]


def test_html_tables_come_out_as_html_with_their_spans(ppocr) -> None:
    result, _ = ocr_document(od.HTML_TABLES, job_id="j", model="pp-ocrv5", engine=ppocr)
    [page] = result["pages"]
    first, second = _blocks(page, "table")
    assert '<td colspan="3">Cells may span columns.</td>' in first["html"]
    assert second["text"].startswith("title1\ttitle2\ncol1\tcol2")
    assert page["text_source"] == "native"


def test_the_cli_reads_a_docx(ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    assert cli.main(["ocr", str(od.DOCX_TEXT), "--model", "pp-ocrv5", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert result["document_type"] == "docx" and "Lorem ipsum dolor sit amet" in result["text"]
    assert result["pages"][0]["text_source"] == "native" and "Traceback" not in capsys.readouterr().err


def test_the_cli_refuses_a_searchable_pdf_of_a_docx_with_a_reason(ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    assert cli.main(["ocr", str(od.DOCX_TEXT), "--model", "pp-ocrv5", "--pdf", str(tmp_path / "out.pdf")]) == 1
    assert "error: unsupported_type: --pdf" in capsys.readouterr().err


def test_placed_formats_of_a_docx_are_refused_in_one_line_and_markdown_is_made(ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    assert cli.main(["ocr", str(od.DOCX_TEXT), "--model", "pp-ocrv5", "--format", "hocr"]) == 1
    err = capsys.readouterr().err
    assert "error: output_unavailable: hocr places each word on its page" in err and "Traceback" not in err
    output = tmp_path / "result.md"
    assert cli.main(["ocr", str(od.DOCX_TEXT), "--model", "pp-ocrv5", "--format", "md", "--output", str(output)]) == 0
    assert "Lorem ipsum dolor sit amet" in output.read_text()


def test_a_docx_job_asking_for_textract_json_completes_with_a_warning_and_valid_schema(platform: Platform, ppocr) -> None:
    uri = platform.put_document("job-docx-tx", "report.docx", od.DOCX_TEXT.read_bytes())
    platform.enqueue({"job_id": "job-docx-tx", "model": "pp-ocrv5", "input": uri, "options": {"outputs": ["textract"]}})

    result = platform.run_queued_job()

    [warning] = [w for w in result["warnings"] if w["code"] == "output_unavailable"]
    assert warning["requested"] == "textract.json" and "no geometry" in warning["reason"]
    assert not any(key.endswith("textract.json") for key in platform.keys("results/job-docx-tx/"))
    assert platform.job("job-docx-tx")["status"] == "COMPLETED" and not platform.job("job-docx-tx").get("formats")
    assert all(line["words"] == [] for line in result["pages"][0]["lines"])
    assert_valid_result(result)


@pytest.mark.parametrize(
    ("make", "code"),
    [(od.encrypted_docx, "encrypted_document"), (od.zip_bomb, "archive_too_large"), (od.truncated_docx, "corrupt_document"),
     (od.huge_html, "document_too_large")],
)
def test_a_bad_input_fails_its_job_with_its_code(platform: Platform, make, code: str) -> None:  # noqa: ANN001
    uri = platform.put_document("job-bad", "input.docx", make())
    platform.store.create(NewJob("job-bad", "pp-ocrv5", uri))

    assert platform.run_processor({"job_id": "job-bad", "model": "pp-ocrv5", "input": uri})["outcome"] == "failed"

    job = platform.job("job-bad")
    assert (job["status"], job["error"]["code"]) == ("FAILED", code)


def test_a_macro_enabled_file_completes_with_a_warning(platform: Platform, ppocr) -> None:
    uri = platform.put_document("job-docm", "macro.docm", od.docm())
    platform.store.create(NewJob("job-docm", "pp-ocrv5", uri))

    assert platform.run_processor({"job_id": "job-docm", "model": "pp-ocrv5", "input": uri})["outcome"] == "completed"

    result = platform.read_json("results/job-docm/result.json")
    assert "Lorem ipsum dolor sit amet" in result["text"]
    assert [w["code"] for w in result["warnings"]] == ["macros_ignored"]
    assert [w["code"] for w in platform.job("job-docm")["warnings"]] == ["macros_ignored"]


def test_a_paddleocr_vl_job_of_a_docx_is_refused_naming_the_cpu_routes(ppocr) -> None:
    from ocr_platform.gpu.model_server import EndpointApp

    app = EndpointApp(lambda: ppocr)
    app.load()
    response = app.invoke(od.DOCX_TEXT.read_bytes(), json.dumps({"job_id": "job-vl", "model": "paddleocr-vl"}))

    assert response.status == 400
    error = json.loads(response.body)["error"]
    assert error["code"] == "unsupported_type" and "pp-ocrv5, pp-ocrv6, pp-structurev3" in error["message"]


def test_the_pp_ocrv6_route_reads_the_pictures_with_pp_ocrv6(ppocr_v6) -> None:
    result, _ = ocr_document(od.PPTX_PICTURES, job_id="j", model="pp-ocrv6", engine=ppocr_v6, pages="1")
    [slide] = result["pages"]
    assert result["engine"]["name"] == ppocr_v6.info["name"] and slide["text_source"] == "mixed"
    assert "powered" in slide["markdown"].lower()


def test_the_pp_structurev3_route_reads_the_pictures_with_its_layout_engine(ppocr) -> None:
    from ocr_platform.engines.local_structure import LocalStructureEngine

    engine = LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")
    result, _ = ocr_document(od.PPTX_MIXED, job_id="j", model="pp-structurev3", engine=engine)
    [slide] = result["pages"]
    assert "python" in _blocks(slide, "image")[0]["text"].lower()
    assert _blocks(slide, "table")[0]["text"] == "Col head 1\tCol head 2\nCell text 1\tCell text 2"  # from the file, not the model


@pytest.mark.parametrize(("name", "data"), [("deck.pptx", od.PPTX_MIXED.read_bytes()), ("page.html", od.HTML_TABLES.read_bytes())])
def test_a_paddleocr_vl_job_of_an_office_or_html_file_fails_before_the_gpu_scales_out(platform: Platform, name: str, data: bytes) -> None:
    uri = platform.put_document("job-vl-office", name, data)
    platform.enqueue({"job_id": "job-vl-office", "model": "paddleocr-vl", "input": uri})

    assert platform.run_invoker() == {"batchItemFailures": []}

    job = platform.job("job-vl-office")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "unsupported_type")
    assert "CPU routes (pp-ocrv5, pp-ocrv6, pp-structurev3)" in job["error"]["message"]
    assert platform.variant()["DesiredInstanceCount"] == 0 and "InvokeEndpointAsync" not in platform.calls


def test_pictures_beyond_the_limit_keep_their_place_unread_and_a_warning_counts_them(ppocr) -> None:
    from ocr_platform.document.intake import IntakeLimits
    from ocr_platform.engines.native_reading import native_result

    found = native_result(od.DOCX_PICTURES, job_id="j", model="pp-ocrv5", engine=ppocr, limits=IntakeLimits(max_pictures=1))
    assert found is not None
    result, _ = found
    [warning] = result["warnings"]
    assert (warning["code"], warning["ran"]) == ("pictures_unread", "1 pictures read")
    assert warning["message"] == "2 of the 3 pictures in the file were not read; their text is not in the result."
    [picture] = _blocks(result["pages"][0], "image")  # the one read, the Python logo; the two others are left out
    assert "python" in picture["text"].lower() and "powered" not in result["text"].lower()


def test_the_cli_reads_a_strict_open_xml_docx_with_the_fallback_named(ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    assert cli.main(["ocr", str(od.OFFICE / "docx2python-strict.docx"), "--model", "pp-ocrv5", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert "Bullet1" in result["text"] and "Cellbb" in result["text"]
    assert [w["code"] for w in result["warnings"]] == ["converter_fallback"]
    assert [b["label"] for b in result["pages"][0]["blocks"]] == ["list", "table"]
    assert "Traceback" not in capsys.readouterr().err


def test_a_docx_the_converter_fails_on_completes_its_job_with_the_fallback_warning(platform: Platform, ppocr) -> None:
    uri = platform.put_document("job-vml", "report.docx", (od.OFFICE / "docx2python-has_pict.docx").read_bytes())
    platform.store.create(NewJob("job-vml", "pp-ocrv5", uri))

    assert platform.run_processor({"job_id": "job-vml", "model": "pp-ocrv5", "input": uri})["outcome"] == "completed"

    result = platform.read_json("results/job-vml/result.json")
    assert_valid_result(result)
    assert "BOEHRINGER INGELHEIM GROUP OF COMPANIES" in result["text"] and "Page 87 of 87" in result["text"]
    assert [w["code"] for w in result["warnings"]] == ["converter_fallback"]
    assert [w["code"] for w in platform.job("job-vml")["warnings"]] == ["converter_fallback"]
