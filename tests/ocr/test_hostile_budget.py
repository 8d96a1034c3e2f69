"""Hostile inputs: small files that declare a huge task end in seconds with ``document_too_large`` (Office, HTML) or
``page_too_large`` (a PDF page whose drawing instructions unpack past the budget).

Each file of issue 42's table is built in code (tests/hostile_files.py) and read by the CPU route's reading path
(``native_result``, as the processor calls it; a PDF's pages rendered one by one) in a child process under a memory ceiling (``RLIMIT_AS``) and a time
ceiling: the child must refuse the file in one line naming the limit, before any reader or engine runs. Time and
peak memory of each case are reported by benchmarks/hostile_budget.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.settings import work_budget_env
from ocr_platform.document.intake import IntakeLimits, file_type
from ocr_platform.document.work_budget import BUDGET_ENV, WorkBudget
from tests import hostile_files
from tests.hostile_files import CASES, SETTINGS, Case, run_child
from tests.office_documents import DOCX_PICTURES, DOCX_TEXT, HTML_TABLES, PPTX_MIXED, XLSX_TEXT


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_hostile_file_is_refused_in_seconds_naming_its_limit(case: Case, tmp_path: Path) -> None:
    path = case.build(tmp_path / f"{case.name}.{case.suffix}")
    outcome = run_child(path)
    assert outcome["code"] == case.code, outcome
    message = str(outcome["message"])
    assert "\n" not in message
    assert case.limit in message and SETTINGS[case.limit] in message, message


def test_a_raised_limit_lets_a_large_file_through_and_the_next_limit_still_holds(tmp_path: Path) -> None:
    deck = hostile_files.pptx_5000_shared_slides(tmp_path / "deck.pptx")
    with pytest.raises(JobError, match="max_units") as refused:
        file_type(deck, IntakeLimits())
    assert refused.value.code == ErrorCode.DOCUMENT_TOO_LARGE
    raised = IntakeLimits(budget=WorkBudget.from_env({BUDGET_ENV["max_units"]: "6000"}))
    assert file_type(deck, raised).value == "pptx"
    dense = hostile_files.xlsx_900_shared_dense_sheets(tmp_path / "dense.xlsx")
    more_cells = IntakeLimits(budget=WorkBudget.from_env({BUDGET_ENV["max_cells"]: str(10**9)}))
    with pytest.raises(JobError, match="max_xml_bytes"):  # 900 uses of one 0.8 MB part: past the XML read, per use
        file_type(dense, more_cells)


@pytest.mark.parametrize("path", [DOCX_PICTURES, DOCX_TEXT, PPTX_MIXED, XLSX_TEXT, HTML_TABLES], ids=lambda p: p.name)
def test_ordinary_files_are_well_within_the_budget(path: Path) -> None:
    assert file_type(path, IntakeLimits()).native


def test_a_file_just_within_a_limit_passes_and_one_over_it_is_refused(tmp_path: Path) -> None:
    sheet = hostile_files.far_cells(tmp_path / "far.xlsx")  # A1 and XFD1048576: 17,179,869,184 cells
    budget = WorkBudget(max_table_cells=16_384 * 1_048_576, max_cells=16_384 * 1_048_576)
    assert file_type(sheet, IntakeLimits(budget=budget)).value == "xlsx"
    with pytest.raises(JobError, match="17,179,869,184 cells; the limit is 17,179,869,183"):
        file_type(sheet, IntakeLimits(budget=WorkBudget(max_table_cells=16_384 * 1_048_576 - 1)))


def test_the_platform_configs_work_budget_reaches_the_processors_budget() -> None:
    environment = work_budget_env(["max_cells=5000000", "max_units=3000"])
    budget = WorkBudget.from_env(environment)
    assert (budget.max_cells, budget.max_units, budget.max_paragraphs) == (5_000_000, 3_000, WorkBudget().max_paragraphs)


def test_the_processors_variables_raise_the_budget_of_every_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = hostile_files.pptx_5000_shared_slides(tmp_path / "deck.pptx")
    monkeypatch.setenv(BUDGET_ENV["max_units"], "6000")
    assert file_type(deck, IntakeLimits()).value == "pptx"


@pytest.mark.parametrize("mode", ["L", "P", "RGB"])
def test_an_embedded_picture_past_the_page_budget_reaches_the_engine_within_it(mode: str) -> None:
    import io

    from PIL import Image

    from ocr_platform.engines.native_reading import _as_png

    buffer = io.BytesIO()
    Image.new(mode, (5000, 4000), 1).save(buffer, "PNG")
    png = _as_png(buffer.getvalue(), IntakeLimits(max_page_pixels=5_000_000))
    assert png
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (2500, 2000) and image.mode == "RGB"
