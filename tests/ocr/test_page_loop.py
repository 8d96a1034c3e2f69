"""The page loop every engine runs (``engines.page_loop``), on real documents with a page reader that
records what it is given (no model: what is checked is the loop's own work)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ocr_platform.core.errors import JobError
from ocr_platform.document.intake import IntakeLimits, PageImage
from ocr_platform.engines.page_loop import PageReading, read_pages


def test_selected_pages_are_read_in_order_with_their_number_size_raw_output_timings_and_progress(docs: dict[str, Path]) -> None:
    progress: list[tuple[int, int]] = []

    def read_page(image: PageImage) -> PageReading:
        time.sleep(0.05)
        return PageReading(content={"lines": []}, raw={"pixels": image.width * image.height})

    read = read_pages(docs["vector_pdf"], pages="3,1", limits=IntakeLimits(render_scale=2.0), read_page=read_page,
                      on_page=lambda done, total: progress.append((done, total)))

    assert read.pages == [
        {"page": 1, "width": 1191, "height": 1684, "scale": 2.0, "rotation": 0, "text_source": "ocr", "lines": []},  # A4 at 2 pixels per point
        {"page": 3, "width": 1191, "height": 1684, "scale": 2.0, "rotation": 0, "text_source": "ocr", "lines": []},
    ]
    assert read.raw_pages == [{"page": 1, "rotation": 0, "pixels": 1191 * 1684}, {"page": 3, "rotation": 0, "pixels": 1191 * 1684}]
    assert progress == [(1, 2), (2, 2)]
    assert set(read.timings) == {"render", "orientation", "predict"}
    assert read.timings["predict"] >= 0.1 and read.timings["render"] > 0


def test_a_refused_document_fails_with_its_code_before_any_page_is_read(docs: dict[str, Path]) -> None:
    read: list[int] = []

    with pytest.raises(JobError) as info:
        read_pages(docs["encrypted"], pages=None, limits=IntakeLimits(), read_page=lambda image: read.append(image.page))  # type: ignore[arg-type, func-returns-value]

    assert info.value.code == "encrypted_pdf" and read == []


def test_a_page_the_engine_raises_on_is_left_out_and_named_and_the_next_page_is_read(docs: dict[str, Path]) -> None:
    progress: list[tuple[int, int]] = []

    def read_page(image: PageImage) -> PageReading:
        if image.page == 2:
            raise RuntimeError("tensor shape mismatch")
        return PageReading(content={"lines": []})

    read = read_pages(docs["vector_pdf"], pages=None, limits=IntakeLimits(), read_page=read_page,
                      on_page=lambda done, total: progress.append((done, total)))

    assert [page["page"] for page in read.pages] == [1, 3] and [raw["page"] for raw in read.raw_pages] == [1, 3]
    assert read.pages_failed == [{"page": 2, "code": "engine_failed", "message": "OCR failed on page 2: RuntimeError: tensor shape mismatch"}]
    assert progress == [(1, 3), (2, 3), (3, 3)]


def test_an_error_about_the_whole_job_still_ends_the_loop(docs: dict[str, Path]) -> None:
    read: list[int] = []

    def read_page(image: PageImage) -> PageReading:
        read.append(image.page)
        raise JobError("model_unavailable", "The recognition model korean_PP-OCRv5_mobile_rec is not on this machine.")

    with pytest.raises(JobError) as info:
        read_pages(docs["vector_pdf"], pages=None, limits=IntakeLimits(), read_page=read_page)

    assert info.value.code == "model_unavailable" and read == [1]
