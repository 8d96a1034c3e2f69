"""Messages, storage layout, routing and result validation: the contracts in DESIGN.md."""

from __future__ import annotations

import json

import pytest

from ocr_platform.errors import JobError
from ocr_platform.messages import InvalidMessageError, JobMessage, parse_job_message
from ocr_platform.models import MODEL_TABLE, route
from ocr_platform.results import build_result, engine_fallback_warning, validate_result
from ocr_platform.storage import S3Uri, StorageLayout, safe_file_name

GOOD = {"job_id": "job-1", "model": "pp-ocrv5", "input": "s3://bucket/documents/job-1/a.pdf"}


def test_message_defaults_and_round_trip() -> None:
    message = parse_job_message(json.dumps({**GOOD, "pages": "1-3,7", "options": {"x": 1}}))
    assert message == JobMessage("job-1", "pp-ocrv5", GOOD["input"], "en", "1-3,7", {"x": 1})
    assert parse_job_message(message.to_json()) == message


@pytest.mark.parametrize(
    ("change", "fragment", "has_job_id"),
    [
        ({"job_id": "../etc"}, "'job_id'", False),
        ({"job_id": None}, "'job_id'", False),
        ({"model": ""}, "'model'", True),
        ({"input": "https://example.com/a.pdf"}, "'input'", True),
        ({"input": "s3://bucket-only"}, "'input'", True),
        ({"language": "EN; drop"}, "'language'", True),
        ({"pages": "1-3,x"}, "'pages'", True),
        ({"pages": "0-2"}, "1-based", True),
        ({"options": [1]}, "'options'", True),
    ],
)
def test_invalid_messages_say_which_field_is_wrong(change: dict, fragment: str, has_job_id: bool) -> None:
    with pytest.raises(InvalidMessageError) as info:
        parse_job_message({**GOOD, **change})
    assert fragment in str(info.value)
    assert (info.value.job_id == "job-1") is has_job_id


def test_routing_table_matches_the_design() -> None:
    assert {name: spec.backend for name, spec in MODEL_TABLE.items()} == {
        "pp-ocrv5": "lambda", "pp-structurev3": "lambda", "paddleocr-vl": "sagemaker"}
    with pytest.raises(JobError) as info:
        route("PP-OCRv5")
    assert info.value.code == "unknown_model"


def test_storage_layout_keys_come_only_from_our_ids() -> None:
    layout = StorageLayout("bkt")
    assert str(layout.document_uri("j1", "../../x/My Scan.PDF")) == "s3://bkt/documents/j1/My_Scan.PDF"
    assert layout.result_uri("j1") == "s3://bkt/results/j1/result.json"
    assert str(layout.async_request_uri("j1")) == "s3://bkt/async/requests/j1.json"
    with pytest.raises(ValueError):
        layout.result_key("../j1")
    assert safe_file_name("...") == "document"
    assert S3Uri.parse("s3://b/a/b.c") == S3Uri("b", "a/b.c")


def test_result_validation_rejects_broken_documents() -> None:
    page = {"page": 1, "width": 10, "height": 10, "scale": 1.0,
            "lines": [{"text": "a", "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]], "score": 1.0}]}
    good = build_result("j", "pp-ocrv5", {"name": "e", "models": [], "version": "1"}, [page, {**page, "page": 2}])
    assert good["text"] == "a\fa"
    assert validate_result(json.loads(json.dumps(good)), job_id="j")["page_count"] == 2
    broken_polygon = json.loads(json.dumps(good))
    broken_polygon["pages"][0]["lines"][0]["polygon"] = [[0, 0]]
    with pytest.raises(JobError, match="polygon"):
        validate_result(broken_polygon)
    with pytest.raises(JobError, match="page_count"):
        validate_result({**good, "page_count": 3})


def test_result_warnings_are_kept_and_checked() -> None:
    page = {"page": 1, "width": 10, "height": 10, "scale": 1.0, "lines": []}
    engine = {"name": "PP-OCRv5", "models": [], "version": "1"}
    assert build_result("j", "pp-ocrv5", engine, [page])["warnings"] == []  # always a list in result.json
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="RuntimeError: no weights")
    doc = json.loads(json.dumps(build_result("j", "pp-structurev3", engine, [page], warnings=[warning])))
    assert validate_result(doc)["warnings"] == [warning]
    older = {key: value for key, value in doc.items() if key != "warnings"}  # an endpoint that writes none
    assert validate_result(older)["warnings"] == []
    with pytest.raises(JobError, match="warning needs string fields"):
        validate_result({**doc, "warnings": [{"code": "engine_fallback"}]})
    with pytest.raises(JobError, match="'warnings' is not a list"):
        validate_result({**doc, "warnings": "engine_fallback"})
