"""JobStore's state machine, enforced by DynamoDB conditional writes (moto)."""

from __future__ import annotations

import logging

import pytest

from ocr_platform.core.errors import JobError
from ocr_platform.core.results import engine_fallback_warning
from ocr_platform.jobs.store import JobAlreadyExistsError, NewJob
from tests.conftest import Platform

ERR = JobError("engine_failed", "boom")


def _queued(platform: Platform, job_id: str = "j1") -> None:
    platform.store.create(NewJob(job_id, "pp-ocrv5", "s3://b/documents/j1/a.png", language="de", pages="1-2"))


def test_create_writes_a_queued_item_with_the_contract_attributes(platform: Platform) -> None:
    _queued(platform)
    job = platform.job("j1")
    assert job["status"] == "QUEUED"
    assert (job["model"], job["language"], job["input"], job["pages"]) == ("pp-ocrv5", "de", "s3://b/documents/j1/a.png", "1-2")
    assert job["created_at"].endswith("Z") and job["created_at"] == job["updated_at"]
    assert isinstance(job["expires_at"], int)


def test_create_refuses_an_existing_job_id(platform: Platform) -> None:
    _queued(platform)
    with pytest.raises(JobAlreadyExistsError):
        _queued(platform)


def test_happy_path_queued_processing_completed(platform: Platform) -> None:
    _queued(platform)
    assert platform.store.mark_processing("j1", "lambda")
    assert platform.store.mark_completed("j1", result_uri="s3://b/results/j1/result.json", page_count=2)
    job = platform.job("j1")
    assert (job["status"], job["backend"], job["page_count"]) == ("COMPLETED", "lambda", 2)
    assert job["started_at"] <= job["finished_at"]
    assert "warnings" not in job  # only a result that differs from what was asked carries warnings


def test_completed_item_carries_the_results_warnings(platform: Platform) -> None:
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="RuntimeError: no weights")
    _queued(platform)
    platform.store.mark_processing("j1", "lambda")
    assert platform.store.mark_completed("j1", result_uri="s3://b/results/j1/result.json", page_count=1, warnings=[warning])
    assert platform.job("j1")["warnings"] == [warning]


def test_queued_can_fail_directly(platform: Platform) -> None:
    _queued(platform)
    assert platform.store.mark_failed("j1", ERR)
    assert platform.job("j1")["error"] == {"code": "engine_failed", "message": "boom"}


def test_queued_cannot_jump_to_completed(platform: Platform) -> None:
    _queued(platform)
    assert not platform.store.mark_completed("j1", result_uri="s3://b/r", page_count=1)
    assert platform.job("j1")["status"] == "QUEUED"


@pytest.mark.parametrize("terminal", ["COMPLETED", "FAILED"])
def test_a_terminal_status_never_changes(platform: Platform, terminal: str, caplog: pytest.LogCaptureFixture) -> None:
    _queued(platform)
    platform.store.mark_processing("j1", "lambda")
    if terminal == "COMPLETED":
        platform.store.mark_completed("j1", result_uri="s3://b/results/j1/result.json", page_count=1)
    else:
        platform.store.mark_failed("j1", ERR)
    before = platform.job("j1")

    with caplog.at_level(logging.WARNING):
        assert not platform.store.mark_processing("j1", "sagemaker")
        assert not platform.store.mark_completed("j1", result_uri="s3://b/other", page_count=9)
        assert not platform.store.mark_failed("j1", JobError("late", "late"))

    assert platform.job("j1") == before
    assert f"it is {terminal}" in caplog.text


def test_processing_cannot_be_claimed_twice(platform: Platform) -> None:
    _queued(platform)
    assert platform.store.mark_processing("j1", "lambda")
    assert not platform.store.mark_processing("j1", "lambda")


def test_mark_failed_creates_an_item_for_an_unregistered_job(platform: Platform) -> None:
    assert platform.store.mark_failed("ghost", ERR)
    job = platform.job("ghost")
    assert job["status"] == "FAILED" and job["created_at"]


def test_list_in_flight_filters_by_backend(platform: Platform) -> None:
    for job_id, backend in (("a", "sagemaker"), ("b", "lambda"), ("c", "sagemaker")):
        platform.store.create(NewJob(job_id, "m", "s3://b/k"))
        platform.store.mark_processing(job_id, backend)
    platform.store.mark_completed("c", result_uri="s3://b/r", page_count=1)
    assert [j["job_id"] for j in platform.store.list_in_flight("sagemaker", window_seconds=60)] == ["a"]


def test_create_keeps_fractional_options_which_dynamodb_takes_only_as_decimals(platform: Platform) -> None:
    platform.store.create(NewJob("j1", "pp-ocrv5", "s3://b/documents/j1/a.png", options={"dpi": 1.5, "outputs": ["pdf"]}))
    assert platform.store.get("j1")["options"] == {"dpi": 1.5, "outputs": ["pdf"]}
