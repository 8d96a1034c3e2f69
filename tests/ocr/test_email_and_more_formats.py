"""Email and the other formats read from their own content, end to end on the CPU route with the real PP-OCRv5:
an email by SQS message (its PDF attachment by its text layer, its picture by OCR, its DOCX from its content, a
forwarded message, an inline picture, an MP3 it cannot read), an Outlook message through the drop folder, an
Excel 97-2003 workbook through the jobs API, and each other format on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from ocr_platform.engines.reading import ocr_document
from tests import office_documents as od
from tests import other_documents as docs
from tests.conftest import BUCKET, Platform
from tests.result_schema import assert_valid_result


def test_an_email_by_sqs_is_one_document_its_attachments_each_read_by_their_own_route(platform: Platform, ppocr, tmp_path: Path) -> None:
    message = docs.email_with_attachments(tmp_path / "mail.eml")
    uri = platform.put_document("job-mail", "mail.eml", message.read_bytes())
    platform.enqueue({"job_id": "job-mail", "model": "pp-ocrv5", "input": uri})

    result = platform.run_queued_job()

    assert_valid_result(result)
    assert result["document_type"] == "eml"
    parts = [(page["page"], page["part"]) for page in result["pages"]]
    assert parts == [(1, "message"), (2, "attachment 1: pages.pdf"), (3, "attachment 1: pages.pdf"), (4, "attachment 1: pages.pdf"),
                     (5, "attachment 1: pages.pdf"), (6, "attachment 2: scan.png"), (7, "attachment 3: report.docx"),
                     (8, "attachment 4: Minutes of Monday")]
    message_page, pdf_first, *_ = result["pages"]
    assert "Invoice and scans" in message_page["markdown"] and "Please find the" in message_page["markdown"]
    assert "python" in message_page["markdown"].lower()  # the inline logo, read by OCR where the HTML shows it
    assert (pdf_first["part_page"], pdf_first["text_source"], pdf_first["lines"][0]["text"]) == (1, "text_layer", "First page")
    assert result["pages"][4]["lines"][0]["text"] == "Last page"
    assert "python" in result["pages"][5]["lines"][0]["text"].lower() and result["pages"][5]["width"] > 0  # the picture, by OCR
    assert "Lorem ipsum" in result["pages"][6]["markdown"] and result["pages"][6]["unit"] == "document"
    assert "budget was approved" in result["pages"][7]["markdown"]
    [unread] = [w for w in result["warnings"] if w["code"] == "attachments_unread"]
    assert "attachment 5: voicemail.mp3 (unsupported_type)" in unread["reason"]
    job = platform.job("job-mail")
    assert (job["status"], job["document_type"], job["page_count"]) == ("COMPLETED", "eml", 8)


def test_an_outlook_message_dropped_in_the_inbox_reads_its_attachment(platform: Platform, ppocr) -> None:
    key = "inbox/pp-ocrv5/message.msg"
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=docs.MSG_ATTACHMENT.read_bytes())
    assert platform.run_ingest(key)["outcome"] == "queued"

    result = platform.run_queued_job()

    assert result["document_type"] == "msg"
    message, attachment = result["pages"]
    assert "Fake email with attachment" in message["markdown"] and "Mallori Harrell" in message["markdown"]
    assert (attachment["part"], attachment["text"] if "text" in attachment else attachment["markdown"]) == (
        "attachment 1: fake-attachment.txt", "Hey this is a fake attachment!")
    assert result["engine"]["models"] == []  # nothing needed a model


def test_an_excel_97_workbook_uploaded_through_the_jobs_api_is_a_page_per_sheet(platform: Platform, ppocr) -> None:
    from tests.handlers.test_api import ALICE, call

    status, created = call("POST", "/jobs", ALICE, body={"filename": "quiz.xls", "model": "pp-ocrv5"})
    assert status == 201
    form = created["upload"]
    assert requests.post(form["url"], data=form["fields"], files={"file": ("quiz.xls", docs.XLS.read_bytes())}, timeout=30).status_code == 204
    assert platform.run_ingest(form["fields"]["key"])["outcome"] == "queued"

    result = platform.run_queued_job()

    assert [(page["unit"], page["name"]) for page in result["pages"]] == [("sheet", "Example Test"), ("sheet", "Format Abbr."), ("sheet", "Readme")]
    assert "What is 2+2?\t4" in result["pages"][0]["blocks"][1]["text"]
    status, job = call("GET", f"/jobs/{created['job_id']}", ALICE)
    assert (job["status"], job["document_type"]) == ("COMPLETED", "xls")


@pytest.mark.parametrize(("path", "kind", "expected"), [
    (docs.DOC, "doc", "DOYLESTOWN, PA 18901"),
    (docs.PPT, "ppt", "Adding a Bullet Slide"),
    (docs.ODT, "odt", "Lorem ipsum dolor sit amet."),
    (docs.RTF, "rtf", "My first paragraph."),
    (docs.CSV, "csv", "Blues\tSTL\t1"),
    (docs.EPUB, "epub", "This is a blockquote for testing."),
    (docs.MSG, "msg", "This is the body of the test email message"),
    (docs.EML_DIGEST, "eml", "This is the third message in the digest."),
])
def test_the_cli_reads_each_format(path: Path, kind: str, expected: str, ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    assert cli.main(["ocr", str(path), "--model", "pp-ocrv5", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert_valid_result(result)
    assert result["document_type"] == kind and expected in result["text"]
    assert not [w for w in result["warnings"] if w["code"] == "no_text"] and "Traceback" not in capsys.readouterr().err


def test_opendocument_sheets_and_slides(ppocr, tmp_path: Path) -> None:
    sheets, _ = ocr_document(docs.ods(tmp_path / "book.ods"), job_id="j", model="pp-ocrv5", engine=ppocr)
    deck, _ = ocr_document(docs.odp(tmp_path / "deck.odp"), job_id="j", model="pp-ocrv5", engine=ppocr)

    prices, empty = sheets["pages"]
    assert (prices["name"], empty["name"]) == ("Prices", "Empty")
    assert prices["blocks"][1]["text"].split("\n") == ["Tea & cake\t4.50", "\t", "after a gap\t"]  # 4.50 as the cell shows it
    [slide] = deck["pages"]
    assert [(b["label"], b["text"]) for b in slide["blocks"]] == [("doc_title", "Quarterly results"), ("text", "Revenue grew"),
                                                                  ("text", "Notes: Say it slowly")]


def test_a_markdown_file_is_read_as_its_structure_and_raw_html_in_it_stays_text(ppocr, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n- first\n- second\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")

    result, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=ppocr)

    [page] = result["pages"]
    assert [b["label"] for b in page["blocks"]] == ["doc_title", "list", "text", "table"]
    assert page["blocks"][2]["text"] == "<script>alert(1)</script>" and "&lt;script&gt;" in page["markdown"]


def test_an_email_on_the_gpu_route_is_refused_before_any_gpu_is_asked_for(tmp_path: Path) -> None:
    from ocr_platform.document.native_files import head_refusal

    refusal = head_refusal(docs.email_with_attachments(tmp_path / "m.eml").read_bytes()[:1024])

    assert refusal is not None and refusal.code == "unsupported_type" and "pp-ocrv5" in refusal.message
    assert od.PICTURE.exists()
