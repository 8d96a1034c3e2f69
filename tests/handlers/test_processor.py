"""CPU processor Lambda against moto, with a plumbing-only engine (real OCR is tested in tests/ocr)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from ocr_platform import engines
from ocr_platform.core.chunks import Chunk
from ocr_platform.core.results import EngineInfo
from ocr_platform.engines import EngineOutput
from ocr_platform.jobs.store import NewJob
from tests.conftest import BUCKET, Platform
from tests.documents import tiny_png
from tests.engine_registry import registered_engine


class PlumbingEngine:
    """Returns one line per selected page (reading the page selection, not the document) and remembers what
    it was given; not OCR."""

    info = EngineInfo(name="plumbing-test-engine", models=["none"], version="0")

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def predict(
        self, path: Path, *, language: str = "en", pages: str | None = None, options: dict | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        self.calls.append({"bytes": path.read_bytes(), "language": language, "pages": pages, "options": options})
        if (options or {}).get("explode"):
            raise RuntimeError("engine blew up")
        numbers = Chunk.from_payload({"index": 0, "count": 1, "pages": pages}).pages if pages else (1,)
        if (options or {}).get("explode_on_page") in numbers:
            raise RuntimeError(f"engine blew up on page {options['explode_on_page']}")  # type: ignore[index]
        result_pages = []
        for done, number in enumerate(numbers, start=1):
            result_pages.append({"page": number, "width": 200, "height": 100, "scale": 2.0,
                                 "lines": [{"text": f"plumbing {number}", "polygon": [[1, 2], [50, 2], [50, 20], [1, 20]], "score": 0.9}]})
            if on_page:
                on_page(done, len(numbers))
        raw = {"engine": "raw output", "pages": [{"page": n} for n in numbers]}
        return EngineOutput(pages=result_pages, raw=raw, timings={"predict": 0.01})


@pytest.fixture
def engine(platform: Platform) -> Iterator[PlumbingEngine]:
    instance = PlumbingEngine()
    with registered_engine("pp-ocrv5", lambda: instance):
        yield instance


def _job(platform: Platform, job_id: str, *, document: bytes | None = None, **extra: Any) -> dict[str, Any]:
    name = "page.png" if document is None else "doc.pdf"
    message = {"job_id": job_id, "model": "pp-ocrv5", "input": platform.put_document(job_id, name, document), "language": "fr", **extra}
    platform.store.create(NewJob(job_id, "pp-ocrv5", message["input"], language="fr"))
    platform.store.mark_processing(job_id, "lambda")
    return message


def test_processor_publishes_result_json_and_completes_the_job(platform: Platform, engine: PlumbingEngine) -> None:
    message = _job(platform, "job-p1", pages="1", options={"det_limit": 960})

    response = platform.run_processor(message)

    assert response["outcome"] == "completed"
    assert engine.calls == [{"bytes": tiny_png(), "language": "fr", "pages": "1", "options": {"det_limit": 960}}]
    result = platform.read_json("results/job-p1/result.json")
    assert result["job_id"] == "job-p1" and result["model"] == "pp-ocrv5"
    assert result["engine"]["name"] == "plumbing-test-engine"
    assert result["page_count"] == 1 and result["text"] == "plumbing 1"
    assert result["pages"][0]["lines"][0]["polygon"] == [[1, 2], [50, 2], [50, 20], [1, 20]]
    assert set(result["timings"]) >= {"download", "predict", "total", "page_images"}
    assert platform.read_json("results/job-p1/raw.json") == {"engine": "raw output", "pages": [{"page": 1}]}
    # The page as intake rendered it for the engine, beside the result, for a viewer to draw the lines on.
    image = platform.s3.get_object(Bucket=BUCKET, Key="results/job-p1/pages/00001.jpg")
    assert image["ContentType"] == "image/jpeg"
    assert Image.open(io.BytesIO(image["Body"].read())).size == Image.open(io.BytesIO(tiny_png())).size
    job = platform.job("job-p1")
    assert job["status"] == "COMPLETED"
    assert job["result"] == f"s3://{BUCKET}/results/job-p1/result.json"
    assert job["page_count"] == 1 and job["pages_done"] == 1 and job["finished_at"] >= job["started_at"]


def test_missing_input_fails_the_job_with_input_not_found(platform: Platform, engine: PlumbingEngine) -> None:
    message = _job(platform, "job-p2")
    platform.s3.delete_object(Bucket=BUCKET, Key="documents/job-p2/page.png")

    assert platform.run_processor(message)["outcome"] == "failed"

    job = platform.job("job-p2")
    assert job["status"] == "FAILED" and job["error"]["code"] == "input_not_found"
    assert "documents/job-p2/page.png" in job["error"]["message"]
    assert platform.keys("results/") == []


def test_engine_exception_fails_the_job_with_engine_failed(platform: Platform, engine: PlumbingEngine) -> None:
    message = _job(platform, "job-p3", options={"explode": True})

    platform.run_processor(message)

    job = platform.job("job-p3")
    assert job["status"] == "FAILED" and job["error"]["code"] == "engine_failed"
    assert "engine blew up" in job["error"]["message"]


def test_late_or_repeated_invocation_of_a_finished_job_is_skipped(platform: Platform, engine: PlumbingEngine) -> None:
    message = _job(platform, "job-p4")
    platform.run_processor(message)
    first = platform.s3.head_object(Bucket=BUCKET, Key="results/job-p4/result.json")["ETag"]

    assert platform.run_processor(message)["outcome"] == "skipped"

    assert len(engine.calls) == 1
    assert platform.s3.head_object(Bucket=BUCKET, Key="results/job-p4/result.json")["ETag"] == first
    assert platform.job("job-p4")["status"] == "COMPLETED"


def test_engine_that_cannot_be_imported_fails_the_job_engine_unavailable(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(engines._LAZY_FACTORIES, "pp-structurev3", "ocr_platform.engines.not_installed:Engine")
    message = _job(platform, "job-p5")
    message["model"] = "pp-structurev3"

    platform.run_processor(message)

    job = platform.job("job-p5")
    assert job["status"] == "FAILED" and job["error"]["code"] == "engine_unavailable"


def test_invalid_payload_with_a_job_id_fails_the_job(platform: Platform) -> None:
    platform.run_processor({"job_id": "job-p6", "model": "pp-ocrv5"})

    job = platform.job("job-p6")
    assert job["status"] == "FAILED" and job["error"]["code"] == "invalid_message"


def _init_processor(monkeypatch: pytest.MonkeyPatch, models: str) -> None:
    """Run the processor module's init phase again, as Lambda does in a new container."""
    import importlib

    from ocr_platform.handlers import processor

    monkeypatch.setenv("OCR_PRELOAD_MODELS", models)
    importlib.reload(processor)


def test_the_init_phase_builds_the_preloaded_engine_once_for_every_job(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[PlumbingEngine] = []
    with registered_engine("pp-ocrv5", lambda: built.append(PlumbingEngine()) or built[-1]):
        _init_processor(monkeypatch, "pp-ocrv5")
        assert len(built) == 1  # before any invocation

        platform.run_processor(_job(platform, "job-p7"))
        platform.run_processor(_job(platform, "job-p8"))

        assert len(built) == 1 and len(built[0].calls) == 2
        assert platform.job("job-p8")["status"] == "COMPLETED"


def test_an_engine_that_fails_at_init_leaves_the_container_up_and_fails_its_jobs(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[int] = []

    def broken() -> PlumbingEngine:
        attempts.append(1)
        raise RuntimeError("inference.onnx is missing")

    with registered_engine("pp-ocrv5", broken):
        _init_processor(monkeypatch, "pp-ocrv5")  # logs, does not raise: the container stays up

        assert platform.run_processor(_job(platform, "job-p9"))["outcome"] == "failed"

        job = platform.job("job-p9")
        assert job["status"] == "FAILED" and job["error"]["code"] == "engine_unavailable"
        assert "inference.onnx is missing" in job["error"]["message"]
        assert len(attempts) == 2  # at init, and again for the job
