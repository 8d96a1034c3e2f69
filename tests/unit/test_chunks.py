"""Chunk planning and the merge of partial results (``ocr_platform.core.chunks``), and the job store's fan-in."""

from __future__ import annotations

import pytest

from ocr_platform.core.chunks import Chunk, InvalidChunkError, merge_chunk_results, merge_raw_outputs, plan_chunks
from ocr_platform.core.results import Page, build_result, engine_fallback_warning
from ocr_platform.jobs.store import NewJob
from tests.conftest import Platform

ENGINE = {"name": "PP-OCRv5", "models": ["det", "rec"], "version": "test"}


def _page(number: int) -> Page:
    return {"page": number, "width": 10, "height": 10, "scale": 2.0,
            "lines": [{"text": f"line of page {number}", "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]], "score": 0.9}]}


def test_plan_cuts_the_selection_in_order_and_leaves_a_short_one_whole() -> None:
    assert [c.page_spec for c in plan_chunks(list(range(1, 15)), pages_per_chunk=6)] == ["1-6", "7-12", "13-14"]
    assert [(c.index, c.count) for c in plan_chunks(list(range(1, 15)), pages_per_chunk=6)] == [(0, 3), (1, 3), (2, 3)]
    assert [c.page_spec for c in plan_chunks([2, 3, 9], pages_per_chunk=6)] == ["2-3,9"]
    with pytest.raises(ValueError, match="at least 1"):
        plan_chunks([1, 2], pages_per_chunk=0)


@pytest.mark.parametrize(
    "payload",
    [{"index": 3, "count": 3, "pages": "1-2"}, {"index": -1, "count": 3, "pages": "1"}, {"index": 0, "count": 1, "pages": "a-b"},
     {"index": 0, "count": 1, "pages": "0"}, {"index": "0", "count": 1, "pages": "1"}, {"index": 0, "count": 1}],
)
def test_an_event_whose_chunk_is_not_one_is_refused(payload: dict) -> None:
    with pytest.raises(InvalidChunkError):
        Chunk.from_payload(payload)


def test_merge_keeps_page_order_each_warning_once_and_sums_timings() -> None:
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="no weights")
    first = build_result("job", "pp-structurev3", ENGINE, [_page(1), _page(2)], {"predict": 1.5, "download": 0.1}, [warning])
    second = build_result("job", "pp-structurev3", ENGINE, [_page(3)], {"predict": 0.5, "download": 0.1}, [warning])

    merged = merge_chunk_results("job", [first, second])

    assert [p["page"] for p in merged["pages"]] == [1, 2, 3] and merged["page_count"] == 3
    assert merged["text"] == "line of page 1\fline of page 2\fline of page 3"
    assert merged["warnings"] == [warning] and merged["engine"] == ENGINE and merged["model"] == "pp-structurev3"
    assert merged["timings"] == {"predict": 2.0, "download": 0.2}
    assert merge_raw_outputs([{"pipeline": "OCR", "pages": [{"page": 1}]}, None, {"pipeline": "OCR", "pages": [{"page": 3}]}]) == {
        "pipeline": "OCR", "pages": [{"page": 1}, {"page": 3}],
    }
    assert merge_raw_outputs([None, None]) is None


def test_exactly_one_chunk_sees_the_set_complete_and_a_repeat_counts_nothing(platform: Platform) -> None:
    store = platform.store
    store.create(NewJob("split", "pp-ocrv5", "s3://b/documents/split/a.pdf"))
    store.mark_processing("split", "lambda")
    assert store.claim_step("split", "run", attempt_id="run-1", lease_seconds=60).acquired
    assert not store.start_chunks("split", 3, attempt_id="run-2")  # not the run that holds the job
    assert store.start_chunks("split", 3, attempt_id="run-1")
    assert not store.start_chunks("split", 3, attempt_id="run-1")  # once only

    assert [store.mark_chunk_done("split", index) for index in (2, 0)] == [1, 2]
    assert store.mark_chunk_done("split", 0) is None  # a duplicate
    assert not store.claim_chunk("split", 0, attempt_id="late", lease_seconds=60).acquired  # done: not run again
    assert store.claim_chunk("split", 1, attempt_id="chunk-1", lease_seconds=60).acquired
    assert not store.claim_chunk("split", 1, attempt_id="copy", lease_seconds=60).acquired  # held
    assert store.mark_chunk_done("split", 1) == 3
    assert platform.job("split")["chunks_done"] == {0, 1, 2}
