"""The formats a job asks for in ``options.outputs`` (hOCR, ALTO, Textract JSON), against moto: each route writes them
beside result.json from the result it publishes (the CPU processor, the chunk that merges a split job, the
completion function from the endpoint's answer); a writer that fails leaves an ``output_unavailable`` warning on a
COMPLETED job instead of losing its result; each route's result.json matches the published JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lxml import etree

from ocr_platform.gpu.model_server import EndpointApp
from tests.conftest import BUCKET, Platform
from tests.handlers.test_fan_out import RecordedInvokes, _split_job
from tests.handlers.test_fan_out import invokes as invokes  # noqa: F401 - the fixture
from tests.handlers.test_gpu_fan_out import _request, _serve, _vl_job
from tests.handlers.test_processor import PlumbingEngine, _job
from tests.handlers.test_processor import engine as engine  # noqa: F401 - the fixture
from tests.result_schema import assert_valid_result

FORMATS = ["hocr", "alto", "textract"]
FILES = {"hocr": "result.hocr", "alto": "result.alto.xml", "textract": "textract.json"}


def _texts(platform: Platform, job_id: str) -> dict[str, list[str]]:
    """Each stored format's lines of text, read back with an XML parser or as JSON."""
    found: dict[str, list[str]] = {}
    hocr = etree.fromstring(platform.s3.get_object(Bucket=BUCKET, Key=f"results/{job_id}/result.hocr")["Body"].read())
    found["hocr"] = [" ".join("".join(line.itertext()).split()) for line in hocr.iter("{*}span") if line.get("class") == "ocr_line"]
    alto = etree.fromstring(platform.s3.get_object(Bucket=BUCKET, Key=f"results/{job_id}/result.alto.xml")["Body"].read())
    found["alto"] = [" ".join(s.get("CONTENT") for s in line.iter("{*}String")) for line in alto.iter("{*}TextLine")]
    textract = platform.read_json(f"results/{job_id}/textract.json")
    found["textract"] = [block["Text"] for block in textract["Blocks"] if block["BlockType"] == "LINE"]
    return found


def test_an_unsplit_job_gets_each_format_it_asked_for_beside_result_json(platform: Platform, engine: PlumbingEngine) -> None:
    message = _job(platform, "job-o1", pages="1", options={"outputs": ["hocr", "alto", "textract"]})

    assert platform.run_processor(message)["outcome"] == "completed"

    result = platform.read_json("results/job-o1/result.json")
    assert_valid_result(result)
    lines = [line["text"] for page in result["pages"] for line in page["lines"]]
    assert _texts(platform, "job-o1") == {name: lines for name in FORMATS}
    types = {name: platform.s3.head_object(Bucket=BUCKET, Key=f"results/job-o1/{file}")["ContentType"] for name, file in FILES.items()}
    assert types == {"hocr": "application/xhtml+xml; charset=utf-8", "alto": "application/xml; charset=utf-8", "textract": "application/json"}
    assert platform.job("job-o1")["status"] == "COMPLETED" and not result["warnings"]
    # The item, and so the completion event and the webhook's body, say which formats exist and where.
    from ocr_platform.outputs.notifications import job_event_detail

    locations = {name: f"s3://{BUCKET}/results/job-o1/{file}" for name, file in FILES.items()}
    assert platform.job("job-o1")["formats"] == locations
    assert job_event_detail(platform.job("job-o1"))["formats"] == locations


def test_a_job_that_asks_for_none_gets_only_result_json(platform: Platform, engine: PlumbingEngine) -> None:
    platform.run_processor(_job(platform, "job-o2", pages="1"))

    assert [key for key in platform.keys("results/job-o2/") if "/pages/" not in key] == ["results/job-o2/raw.json", "results/job-o2/result.json"]


def test_a_split_job_gets_its_formats_from_the_chunk_that_merges(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    message = _split_job(platform, "job-o3", page_count=12, options={"outputs": ["textract", "alto"]})
    assert platform.run_processor(message)["outcome"] == "fanned_out"
    first, second = invokes.events
    assert platform.run_processor(first)["outcome"] == "chunk_done"
    assert platform.keys("results/job-o3/textract") == []
    assert platform.run_processor(second)["outcome"] == "completed"

    assert_valid_result(platform.read_json("results/job-o3/result.json"))  # the merged result
    textract = platform.read_json("results/job-o3/textract.json")
    assert textract["DocumentMetadata"] == {"Pages": 12}
    assert [b["Text"] for b in textract["Blocks"] if b["BlockType"] == "LINE"] == [f"plumbing {n}" for n in range(1, 13)]
    assert platform.keys("results/job-o3/result.alto.xml") and not platform.keys("results/job-o3/result.hocr")


def test_a_format_that_cannot_be_written_warns_and_the_job_still_completes(
    platform: Platform, engine: PlumbingEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ocr_platform.outputs import formats

    def broken(result: Any) -> str:
        raise ValueError("no such thing")

    monkeypatch.setitem(formats.FORMATS, "alto", formats.OutputFormat("alto", "result.alto.xml", "application/xml", broken))
    platform.run_processor(_job(platform, "job-o4", pages="1", options={"outputs": ["alto", "hocr"]}))

    job = platform.job("job-o4")
    [warning] = job["warnings"]
    assert job["status"] == "COMPLETED"
    assert (warning["code"], warning["requested"], warning["reason"]) == ("output_unavailable", "result.alto.xml", "ValueError: no such thing")
    assert platform.read_json("results/job-o4/result.json")["warnings"] == [warning]
    assert platform.keys("results/job-o4/result.hocr") and not platform.keys("results/job-o4/result.alto.xml")
    assert job["formats"] == {"hocr": f"s3://{BUCKET}/results/job-o4/result.hocr"}


@pytest.fixture
def endpoint(platform: Platform) -> Iterator[EndpointApp]:
    app = EndpointApp(PlumbingEngine, pages_per_chunk=4)
    app.load()
    yield app


def test_a_gpu_job_gets_its_formats_from_the_completion_function(platform: Platform, endpoint: EndpointApp) -> None:
    """The job was sent to the queue directly: its item holds no options, the endpoint's answer says what it asked for."""
    message = _vl_job(platform, "job-o5", 2, options={"outputs": ["hocr"]})
    note = _serve(platform, endpoint, _request({**message, "pages": "1-2"}), n=0)

    assert platform.publish("success", note) == {"outcomes": ["completed"]}

    assert _texts_of_hocr(platform, "job-o5") == ["plumbing 1", "plumbing 2"]
    assert platform.job("job-o5")["formats"] == {"hocr": f"s3://{BUCKET}/results/job-o5/result.hocr"}
    result = json.loads(platform.s3.get_object(Bucket=BUCKET, Key="results/job-o5/result.json")["Body"].read())
    assert result["page_count"] == 2
    assert_valid_result(result)  # the GPU route's, as the completion function stored it


def _texts_of_hocr(platform: Platform, job_id: str) -> list[str]:
    hocr = etree.fromstring(platform.s3.get_object(Bucket=BUCKET, Key=f"results/{job_id}/result.hocr")["Body"].read())
    return [" ".join("".join(line.itertext()).split()) for line in hocr.iter("{*}span") if line.get("class") == "ocr_line"]


def test_the_jobs_api_links_stored_formats_and_makes_one_asked_for_later_from_result_json(
    platform: Platform, engine: PlumbingEngine
) -> None:
    """A job that asked for Textract JSON has its link; ``?format=alto`` makes the ALTO file from result.json (the
    engine does not run again) and links it; an unknown format is refused."""
    import requests

    from ocr_platform.jobs.store import NewJob
    from tests.handlers.test_api import ALICE, BOB, call

    message = {"job_id": "job-o6", "model": "pp-ocrv5", "input": platform.put_document("job-o6", "page.png"), "language": "en",
               "pages": "1", "options": {"outputs": ["textract"]}}
    platform.store.create(NewJob("job-o6", "pp-ocrv5", message["input"], owner=ALICE, options=message["options"]))  # as the API writes it
    platform.store.mark_processing("job-o6", "lambda")
    assert platform.run_processor(message)["outcome"] == "completed"
    runs = len(engine.calls)

    status, answer = call("GET", "/jobs/job-o6/result", ALICE)
    assert status == 200 and sorted(answer["formats"]) == ["textract"]
    assert requests.get(answer["formats"]["textract"], timeout=30).json()["DocumentMetadata"] == {"Pages": 1}

    status, answer = call("GET", "/jobs/job-o6/result", ALICE, query={"format": "alto"})
    assert status == 200 and sorted(answer["formats"]) == ["alto", "textract"]
    alto = etree.fromstring(requests.get(answer["formats"]["alto"], timeout=30).content)
    assert [s.get("CONTENT") for s in alto.iter("{*}String")] == ["plumbing", "1"]
    assert len(engine.calls) == runs
    assert call("GET", "/jobs/job-o6/result", ALICE, query={"format": "docx"})[1]["error"]["code"] == "unknown_format"
    assert call("GET", "/jobs/job-o6/result", BOB, query={"format": "alto"})[0] == 404


def test_cli_result_format_serves_the_stored_file_or_makes_one_from_result_json(
    platform: Platform, engine: PlumbingEngine, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from ocr_platform.cli import commands as cli
    from ocr_platform.jobs.store import NewJob
    from tests.conftest import TABLE

    for name, value in {"OCR_BUCKET_NAME": BUCKET, "OCR_QUEUE_URL": platform.queue_url, "OCR_TABLE_NAME": TABLE}.items():
        monkeypatch.setenv(name, value)
    message = {"job_id": "job-o7", "model": "pp-ocrv5", "input": platform.put_document("job-o7", "page.png"), "language": "en",
               "pages": "1", "options": {"outputs": ["textract"]}}
    platform.store.create(NewJob("job-o7", "pp-ocrv5", message["input"], options=message["options"]))
    platform.store.mark_processing("job-o7", "lambda")
    platform.run_processor(message)
    stored = platform.s3.get_object(Bucket=BUCKET, Key="results/job-o7/textract.json")["Body"].read()

    assert cli.main(["result", "job-o7", "--format", "textract", "--output", str(tmp_path / "t.json")]) == 0
    assert (tmp_path / "t.json").read_bytes() == stored
    capsys.readouterr()
    assert cli.main(["result", "job-o7", "--format", "hocr"]) == 0
    hocr = etree.fromstring(capsys.readouterr().out.encode())
    assert [" ".join("".join(s.itertext()).split()) for s in hocr.iter("{*}span") if s.get("class") == "ocr_line"] == ["plumbing 1"]
    assert not platform.keys("results/job-o7/result.hocr")  # made here, from result.json
    assert cli.main(["result", "job-o7", "--format", "md"]) == 0
    assert capsys.readouterr().out == "plumbing 1\n"
    assert cli.main(["result", "job-o7", "--format", "pdf"]) == 2
    assert "error: output_required: " in capsys.readouterr().err
