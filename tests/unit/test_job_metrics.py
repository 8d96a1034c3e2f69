"""The job metrics' EMF lines: names, units, dimension sets and values, as CloudWatch extracts them from a log."""

from __future__ import annotations

import json

import pytest

from ocr_platform.core.metrics import count_finished_job, count_started_job, job_outcome_line

NAMESPACE = "OcrPlatform/unit"


def _printed(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]


@pytest.fixture(autouse=True)
def _namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)


def test_a_completed_job_is_one_line_with_its_count_latency_and_pages(capsys: pytest.CaptureFixture[str]) -> None:
    count_finished_job({"job_id": "j", "model": "pp-structurev3", "status": "COMPLETED", "page_count": 12,
                        "created_at": "2026-11-22T07:00:00.000Z", "finished_at": "2026-11-22T07:01:02.250Z"})

    [line] = _printed(capsys)
    [directive] = line["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == NAMESPACE
    assert directive["Dimensions"] == [["service"], ["service", "route"]]
    assert directive["Metrics"] == [{"Name": "JobsCompleted", "Unit": "Count"}, {"Name": "JobLatency", "Unit": "Milliseconds"},
                                    {"Name": "PagesProcessed", "Unit": "Count"}]
    assert (line["service"], line["route"]) == ("jobs", "pp-structurev3")
    assert (line["JobsCompleted"], line["JobLatency"], line["PagesProcessed"]) == ([1.0], [62_250.0], [12.0])


def test_a_started_job_is_counted_by_route(capsys: pytest.CaptureFixture[str]) -> None:
    count_started_job("paddleocr-vl")

    [line] = _printed(capsys)
    assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service"], ["service", "route"]]
    assert (line["route"], line["JobsStarted"]) == ("paddleocr-vl", [1.0])


@pytest.mark.parametrize(
    ("model", "code", "route", "error_code"),
    [
        ("pp-ocrv5", "encrypted_pdf", "pp-ocrv5", "encrypted_pdf"),
        # What a client or an endpoint wrote is no dimension value: each value would be a metric of its own.
        ("made-up-model-7", "unknown_model", "unknown", "unknown_model"),
        (None, "invalid_message", "unknown", "invalid_message"),
        ("paddleocr-vl", "cuda_out_of_memory_on_gpu_3", "paddleocr-vl", "other"),
    ],
)
def test_failure_dimensions_stay_bounded(model: str | None, code: str, route: str, error_code: str) -> None:
    job = {"job_id": "j", "status": "FAILED", "error": {"code": code, "message": "..."}, **({"model": model} if model else {})}

    line = job_outcome_line(job, namespace=NAMESPACE)

    assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service"], ["service", "route"], ["service", "error_code"]]
    assert (line["route"], line["error_code"], line["JobsFailed"]) == (route, error_code, [1.0])
    assert "JobLatency" not in line


def test_a_completed_job_without_timestamps_is_still_counted() -> None:
    line = job_outcome_line({"job_id": "j", "model": "pp-ocrv5", "status": "COMPLETED"}, namespace=NAMESPACE)

    assert line["JobsCompleted"] == [1.0] and "JobLatency" not in line and "PagesProcessed" not in line


def test_without_a_namespace_or_with_metrics_disabled_nothing_is_written_and_nothing_raises(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE")
    count_finished_job({"job_id": "j", "model": "pp-ocrv5", "status": "COMPLETED"})
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    count_started_job("pp-ocrv5")

    assert _printed(capsys) == []
