"""A real table printed over three pages comes back from the ``pp-structurev3`` route (its local substitute, on real
weights) as one table with its header once, and no cell's text is lost: through the CPU processor against moto for a
whole job and for a split job whose chunks each read one page (the chunk that completes the set merges them), and
chunk by chunk as the merge of any split joins them (``tests/documents/public/README.md`` has the document)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2
import pytest

from ocr_platform import engines
from ocr_platform.core.chunks import merge_chunk_results
from ocr_platform.core.settings import ENV
from ocr_platform.core.tables import html_table_text
from ocr_platform.core.text_metrics import words
from ocr_platform.engines.local_structure import LocalStructureEngine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.handlers import _services
from tests.conftest import Platform
from tests.handlers.test_fan_out import RecordedInvokes
from tests.handlers.test_fan_out import invokes as invokes  # noqa: F401 - the fixture

REPORT = Path(__file__).parents[1] / "documents" / "public" / "warn-report-3-pages.pdf"
HEADER = ("Notice Date", "Effective", "Received", "Company", "City", "No. Of", "Layoff/Closure")


def layer_text(number: int) -> str:
    """What the PDF's own text layer says on page ``number`` (the reference: no OCR in it)."""
    document = pypdfium2.PdfDocument(REPORT)
    try:
        return str(document[number - 1].get_textpage().get_text_range())
    finally:
        document.close()


def tables(result: dict[str, Any]) -> list[tuple[int, int, dict[str, Any]]]:
    return [(page["page"], index, block) for page in result["pages"] for index, block in enumerate(page["blocks"])
            if block["label"] == "table"]


@pytest.fixture(scope="module")
def structure_engine(ppocr) -> LocalStructureEngine:
    return LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")


@pytest.fixture(scope="module")
def whole(structure_engine: LocalStructureEngine) -> dict[str, Any]:
    result, _ = ocr_document(REPORT, job_id="warn", model="pp-structurev3", engine=structure_engine)
    return result  # type: ignore[return-value]


@pytest.fixture
def registered(structure_engine: LocalStructureEngine) -> Iterator[LocalStructureEngine]:
    engines.register_engine("pp-structurev3", lambda: structure_engine)
    yield structure_engine
    engines._factories.pop("pp-structurev3", None)
    engines._instances.pop("pp-structurev3", None)


def assert_one_table_over_three_pages(result: dict[str, Any]) -> None:
    found = tables(result)
    assert [page for page, _, _ in found] == [1, 2, 3]
    (_, head_index, head), (_, _, second), (_, _, third) = found
    assert second["continued_from"] == third["continued_from"] == {"page": 1, "block": head_index, "header_rows": 0}
    merged = html_table_text(head["html"])
    assert merged.split("\n")[0] == "\t".join(HEADER)
    assert merged.split("\n").count("\t".join(HEADER)) == 1
    assert merged.count("Notice Date") == merged.count("Layoff/Closure") == 1
    # Every cell of each page's part is in the merged table, and every word the text layer has on the continued
    # pages (the table and nothing else there).
    for block in (head, second, third):
        assert not words(block["text"]) - words(merged)
    for number in (2, 3):
        reference = words(layer_text(number))
        assert sum((reference & words(merged)).values()) / sum(reference.values()) >= 0.99, number
    assert len(re.findall(r"<tr\b", head["html"])) > 100  # 37 + 43 + 43 rows printed
    # The document's Markdown (its pages' in order) has the table once, with its header once.
    markdown = "\n\n".join(page["markdown"] for page in result["pages"])
    assert markdown.count("<table") == 1 and markdown.count("Notice Date") == 1 and "WARN Report" in markdown
    # A page's text stays what is on it.
    assert result["text"].split("\f")[1:] == [second["text"], third["text"]]


def test_a_table_over_three_pages_is_one_table_with_its_header_once_through_the_processor(
    platform: Platform, registered: LocalStructureEngine,
) -> None:
    job_id = "job-warn"
    message = platform.processing_job(job_id, "pp-structurev3", "warn.pdf", REPORT.read_bytes())

    assert platform.run_processor(message)["outcome"] == "completed"

    assert_one_table_over_three_pages(platform.read_json(f"results/{job_id}/result.json"))


@pytest.fixture
def one_page_chunks(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The processor splits a job into chunks of one page (the planner prices a page with a text layer at a tenth
    of a page, so it would not split these three)."""
    monkeypatch.setenv(ENV.CPU_PAGES_PER_CHUNK, "1")
    monkeypatch.setattr("ocr_platform.cpu.job_runner.page_costs", lambda *args: None)
    _services.reset()
    yield
    _services.reset()


@pytest.mark.usefixtures("one_page_chunks")
def test_a_split_job_whose_chunks_each_read_one_page_merges_them_into_one_table_through_the_processor(
    platform: Platform, registered: LocalStructureEngine, invokes: RecordedInvokes,
) -> None:
    job_id = "job-warn-split"
    message = platform.processing_job(job_id, "pp-structurev3", "warn.pdf", REPORT.read_bytes())

    assert platform.run_processor(message)["outcome"] == "fanned_out"
    assert [event["chunk"]["pages"] for event in invokes.events] == ["1", "2", "3"]
    third, first, second = invokes.events[2], invokes.events[0], invokes.events[1]
    assert [platform.run_processor(event)["outcome"] for event in (third, first, second)] == ["chunk_done", "chunk_done", "completed"]

    assert_one_table_over_three_pages(platform.read_json(f"results/{job_id}/result.json"))


@pytest.mark.parametrize("chunks", [["1", "2-3"], ["1-2", "3"]])
def test_a_split_jobs_chunks_merge_into_the_same_one_table(
    structure_engine: LocalStructureEngine, whole: dict[str, Any], chunks: list[str],
) -> None:
    parts = [ocr_document(REPORT, job_id="warn", model="pp-structurev3", engine=structure_engine, pages=pages)[0] for pages in chunks]

    merged = merge_chunk_results("warn", parts)

    assert_one_table_over_three_pages(merged)
    assert [page["blocks"] for page in merged["pages"]] == [page["blocks"] for page in whole["pages"]]
    assert [page["markdown"] for page in merged["pages"]] == [page["markdown"] for page in whole["pages"]]
