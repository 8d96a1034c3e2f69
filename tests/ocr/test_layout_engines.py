"""PP-StructureV3 and PaddleOCR-VL adapters, tested up to the model call.

Their weights cannot be had offline, so these tests check what the adapters control: the pipeline's
construction arguments (model names and the directories resolved for them), the conversion of the
pipelines' documented result structure (``json["res"]`` with ``parsing_res_list`` and
``overall_ocr_res``, plus ``markdown``) into result pages, and the fallback that runs the real PP-OCRv5
model (never made-up text) when a pipeline cannot be built, saying so in ``engine``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ocr_platform.engines.paddle import PaddleOCRVLEngine, PaddleSettings, PPStructureV3Engine, layout_blocks
from ocr_platform.errors import JobError
from ocr_platform.processing import ocr_document
from tests.documents import ENGLISH_PAGES, character_error_rate

TABLE_HTML = "<html><body><table><tr><td>Item</td><td>Price</td></tr><tr><td>Tea</td><td>4.50</td></tr></table></body></html>"


class DocumentedResult(dict):
    """Shaped like PaddleX's layout-parsing result: ``json`` -> {"res": ...} and ``markdown``."""

    def __init__(self, width: int, height: int) -> None:
        super().__init__()
        self.json = {"res": {
            "width": width, "height": height, "page_index": None,
            "parsing_res_list": [
                {"block_label": "table", "block_content": TABLE_HTML, "block_bbox": [100, 400, 900, 600], "block_id": 2, "block_order": 2},
                {"block_label": "doc_title", "block_content": "Quarterly report", "block_bbox": [100, 80, 700, 140], "block_id": 0, "block_order": 1},
                {"block_label": "image", "block_content": "", "block_bbox": [100, 700, 500, 900], "block_id": 3, "block_order": None},
            ],
            "overall_ocr_res": {
                "rec_texts": ["Quarterly report"], "rec_scores": [0.99],
                "rec_polys": [np.array([[100, 80], [700, 80], [700, 140], [100, 140]])],
            },
        }}
        self.markdown = {"markdown_texts": "# Quarterly report\n\n" + TABLE_HTML, "markdown_images": {}}


class RecordingPipeline:
    """Stands in for the PaddleOCR pipeline class: records construction and predict calls."""

    instances: list["RecordingPipeline"] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.predicted: list[tuple[tuple[int, ...], dict[str, Any]]] = []
        RecordingPipeline.instances.append(self)

    def predict(self, image: np.ndarray, **kwargs: Any) -> list[DocumentedResult]:
        self.predicted.append((image.shape, kwargs))
        return [DocumentedResult(image.shape[1], image.shape[0])]


@pytest.fixture
def settings(ocr_settings: PaddleSettings) -> PaddleSettings:
    return ocr_settings


def test_structure_engine_constructs_the_pipeline_with_resolved_models(settings: PaddleSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    baked = tmp_path / "baked"
    for name in PPStructureV3Engine.models:
        (baked / name).mkdir(parents=True)
        (baked / name / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
        (baked / name / "inference.pdiparams").write_bytes(b"weights")
    monkeypatch.setenv("OCR_MODEL_DIR", str(baked))

    engine = PPStructureV3Engine(settings, pipeline_factory=RecordingPipeline)

    kwargs = RecordingPipeline.instances[-1].kwargs
    assert kwargs["layout_detection_model_name"] == "PP-DocLayout_plus-L"
    assert kwargs["layout_detection_model_dir"] == str(baked / "PP-DocLayout_plus-L")
    assert kwargs["text_recognition_model_dir"] == str(baked / "PP-OCRv5_mobile_rec")
    assert kwargs["wired_table_structure_recognition_model_name"] == "SLANeXt_wired"
    assert kwargs["use_table_recognition"] is True and kwargs["use_formula_recognition"] is False
    assert kwargs["text_det_limit_type"] == settings.det_limit_type
    assert engine.fallback is None and engine.info["name"] == "PP-StructureV3"


def test_structure_result_conversion_blocks_in_reading_order_tables_as_html(settings: PaddleSettings, docs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ocr_platform.engines.paddle.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    engine = PPStructureV3Engine(settings, pipeline_factory=RecordingPipeline)

    result, raw = ocr_document(docs["vector_pdf"], job_id="s", model="pp-structurev3", engine=engine, pages="2")

    [page] = result["pages"]
    assert (page["page"], page["width"], page["scale"]) == (2, 1191, 2.0)
    assert [b["label"] for b in page["blocks"]] == ["doc_title", "table", "image"]
    title, table, _ = page["blocks"]
    assert title == {"label": "doc_title", "bbox": [100.0, 80.0, 700.0, 140.0], "text": "Quarterly report"}
    assert table["html"] == TABLE_HTML and table["text"] == "Item\tPrice\nTea\t4.50"
    assert page["markdown"].startswith("# Quarterly report")
    assert page["lines"] == [{"text": "Quarterly report", "polygon": [[100.0, 80.0], [700.0, 80.0], [700.0, 140.0], [100.0, 140.0]], "score": 0.99}]
    assert result["text"] == "Quarterly report\nItem\tPrice\nTea\t4.50"
    assert raw["pipeline"] == "PP-StructureV3" and raw["pages"][0]["page"] == 2
    shape, _ = RecordingPipeline.instances[-1].predicted[0]
    assert shape == (1684, 1191, 3)


def test_vl_engine_constructs_paddleocr_vl_with_the_chosen_backend(settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ocr_platform.engines.paddle.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    monkeypatch.setenv("OCR_VL_BACKEND", "vllm-server")
    monkeypatch.setenv("OCR_VL_SERVER_URL", "http://127.0.0.1:8118/v1")

    engine = PaddleOCRVLEngine(settings, pipeline_factory=RecordingPipeline)

    kwargs = RecordingPipeline.instances[-1].kwargs
    assert kwargs["pipeline_version"] == "v1"
    assert (kwargs["vl_rec_model_name"], kwargs["layout_detection_model_name"]) == ("PaddleOCR-VL-0.9B", "PP-DocLayoutV2")
    assert (kwargs["vl_rec_backend"], kwargs["vl_rec_server_url"]) == ("vllm-server", "http://127.0.0.1:8118/v1")
    assert engine.info["name"] == "PaddleOCR-VL"


def test_unavailable_pipeline_falls_back_to_real_pp_ocrv5_and_says_so(settings: PaddleSettings, docs: dict[str, Path], ppocr) -> None:
    engine = PPStructureV3Engine(settings)  # the PP-StructureV3 weights are not obtainable offline

    result, _ = ocr_document(docs["png"], job_id="f", model="pp-structurev3", engine=engine)

    assert result["engine"]["name"].startswith("PP-OCRv5 (fallback: PP-StructureV3 unavailable here")
    assert result["engine"]["models"] == ["PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec"]
    got = "\n".join(line["text"] for line in result["pages"][0]["lines"])
    assert character_error_rate(got, "\n".join(ENGLISH_PAGES[0])) <= 0.02


def test_no_fallback_means_a_clear_engine_unavailable_error(settings: PaddleSettings) -> None:
    from dataclasses import replace

    with pytest.raises(JobError) as info:
        PaddleOCRVLEngine(replace(settings, fallback_model="none"))
    assert info.value.code == "engine_unavailable" and "PaddleOCR-VL" in info.value.message


def test_layout_blocks_keep_document_order_when_no_order_is_given() -> None:
    blocks = layout_blocks([{"block_label": "text", "block_content": "b", "block_bbox": [0, 0, 1, 1]},
                            {"block_label": "text", "block_content": "a", "block_bbox": [0, 0, 1, 1]}])
    assert [b["text"] for b in blocks] == ["b", "a"]
