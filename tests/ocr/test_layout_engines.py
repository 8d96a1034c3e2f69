"""PP-StructureV3 and PaddleOCR-VL adapters, tested up to the model call.

Their weights cannot be had offline, so these tests check what the adapters control: the pipeline's
construction arguments (model names and the directories resolved for them), the conversion of the
pipelines' documented result structure (``json["res"]`` with ``parsing_res_list`` and
``overall_ocr_res``, plus ``markdown``) into result pages, and what happens when a pipeline cannot be
built: with fallback off (every deployed stage) the job fails ``engine_unavailable``; with it on (the local
stack) the real PP-OCRv5 model runs (never made-up text), ``engine`` names it and an ``engine_fallback``
warning on the job item and in result.json says what was asked for, what ran and why.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ocr_platform import engines
from ocr_platform.cli import commands as cli
from ocr_platform.core import defaults
from ocr_platform.core.errors import JobError
from ocr_platform.core.results import EngineInfo, engine_fallback_warning
from ocr_platform.core.settings import ENV
from ocr_platform.cpu.job_runner import ocr_document
from ocr_platform.engines import EngineOutput
from ocr_platform.engines.conversion import layout_blocks
from ocr_platform.engines.layout import HUB_CHECK_TIMEOUT, unreachable_hub
from ocr_platform.engines.paddleocr_vl import PaddleOCRVLEngine, VLVersion
from ocr_platform.engines.ppstructurev3 import PPStructureV3Engine
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.gpu.model_server import EndpointApp
from ocr_platform.jobs.store import NewJob
from tests.conftest import BUCKET, Platform
from tests.documents import ENGLISH_PAGES, character_error_rate
from tests.ocr import LOCAL_ORIENTATION_MODELS

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

    instances: list[RecordingPipeline] = []

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


@pytest.fixture(autouse=True)
def default_vl_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """PaddleOCR-VL runs its default version (v1.6) unless a test names another."""
    monkeypatch.delenv(ENV.VL_VERSION, raising=False)


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


def test_structure_result_conversion_blocks_in_reading_order_tables_as_html(
    settings: PaddleSettings, docs: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    engine = PPStructureV3Engine(settings, pipeline_factory=RecordingPipeline)

    result, raw = ocr_document(docs["vector_pdf"], job_id="s", model="pp-structurev3", engine=engine, pages="2")

    [page] = result["pages"]
    assert (page["page"], page["width"], page["scale"]) == (2, 1191, 2.0)
    assert [b["label"] for b in page["blocks"]] == ["doc_title", "table", "image"]
    title, table, _ = page["blocks"]
    assert title == {"label": "doc_title", "bbox": [100.0, 80.0, 700.0, 140.0], "text": "Quarterly report"}
    assert table["html"] == TABLE_HTML and table["text"] == "Item\tPrice\nTea\t4.50"
    assert page["markdown"].startswith("# Quarterly report")
    assert [{k: v for k, v in line.items() if k != "words"} for line in page["lines"]] == [
        {"text": "Quarterly report", "polygon": [[100.0, 80.0], [700.0, 80.0], [700.0, 140.0], [100.0, 140.0]], "score": 0.99}
    ]
    assert [word["text"] for word in page["lines"][0]["words"]] == ["Quarterly", "report"]  # estimated: no alignment given
    assert result["text"] == "Quarterly report\nItem\tPrice\nTea\t4.50"
    assert raw["pipeline"] == "PP-StructureV3" and raw["pages"][0]["page"] == 2
    shape, _ = RecordingPipeline.instances[-1].predicted[0]
    assert shape == (1684, 1191, 3)


def test_vl_engine_constructs_paddleocr_vl_with_the_chosen_backend(settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    monkeypatch.setenv("OCR_VL_BACKEND", "vllm-server")
    monkeypatch.setenv("OCR_VL_SERVER_URL", "http://127.0.0.1:8118/v1")

    engine = PaddleOCRVLEngine(settings, pipeline_factory=RecordingPipeline)

    kwargs = RecordingPipeline.instances[-1].kwargs
    assert kwargs["pipeline_version"] == defaults.ENDPOINT_VL_VERSION == "v1.6"  # the newest, unless told otherwise
    assert (kwargs["vl_rec_model_name"], kwargs["layout_detection_model_name"]) == ("PaddleOCR-VL-1.6-0.9B", "PP-DocLayoutV3")
    assert (kwargs["vl_rec_backend"], kwargs["vl_rec_server_url"]) == ("vllm-server", "http://127.0.0.1:8118/v1")
    assert engine.info == {"name": "PaddleOCR-VL 1.6", "models": ["PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"], "version": engine.info["version"]}


@pytest.mark.parametrize(
    ("version", "name", "models"),
    [
        ("v1", "PaddleOCR-VL 1.0", ["PP-DocLayoutV2", "PaddleOCR-VL-0.9B"]),
        ("v1.5", "PaddleOCR-VL 1.5", ["PP-DocLayoutV3", "PaddleOCR-VL-1.5-0.9B"]),
        ("v1.6", "PaddleOCR-VL 1.6", ["PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"]),
    ],
)
def test_vl_engine_runs_the_version_ocr_vl_version_names_and_the_result_names_it(
    settings: PaddleSettings, docs: dict[str, Path], version: str, name: str, models: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    monkeypatch.setenv(ENV.VL_VERSION, version)

    engine = PaddleOCRVLEngine(settings, pipeline_factory=RecordingPipeline)
    result, _ = ocr_document(docs["png"], job_id="v", model="paddleocr-vl", engine=engine, options={"orientation": False})

    kwargs = RecordingPipeline.instances[-1].kwargs
    assert (kwargs["pipeline_version"], kwargs["layout_detection_model_name"], kwargs["vl_rec_model_name"]) == (version, *models)
    assert (result["engine"]["name"], result["engine"]["models"]) == (name, models)


def test_an_unknown_vl_version_is_refused_naming_the_valid_ones(settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV.VL_VERSION, "v2")

    with pytest.raises(JobError) as info:
        PaddleOCRVLEngine(replace(settings, allow_fallback=True), pipeline_factory=RecordingPipeline)  # never a quiet fallback
    assert info.value.code == "engine_unavailable"
    assert info.value.message == "OCR_VL_VERSION='v2' is not a PaddleOCR-VL pipeline version; valid: v1, v1.5, v1.6"


def test_the_vl_version_table_is_what_the_installed_paddleocr_ships() -> None:
    """``defaults.VL_VERSION_MODELS`` against PaddleOCR's own versions and PaddleX's pipeline config of each."""
    from types import SimpleNamespace

    from paddleocr._pipelines import paddleocr_vl
    from paddlex.inference.pipelines import load_pipeline_config

    assert list(defaults.VL_VERSION_MODELS) == paddleocr_vl._AVAILABLE_PIPELINE_VERSIONS
    assert defaults.ENDPOINT_VL_VERSION == paddleocr_vl._DEFAULT_PIPELINE_VERSION  # the newest PaddleOCR ships
    for version, models in defaults.VL_VERSION_MODELS.items():
        pipeline = paddleocr_vl.PaddleOCRVL._paddlex_pipeline_name.fget(SimpleNamespace(pipeline_version=version))
        modules = load_pipeline_config(pipeline)["SubModules"]
        assert (modules["LayoutDetection"]["model_name"], modules["VLRecognition"]["model_name"]) == models, version
        assert VLVersion.named(version).models == models


def test_with_fallback_on_an_unavailable_pipeline_runs_real_pp_ocrv5_and_says_so(settings: PaddleSettings, docs: dict[str, Path], ppocr) -> None:
    engine = PaddleOCRVLEngine(replace(settings, allow_fallback=True))  # its weights are not obtainable offline

    result, _ = ocr_document(docs["png"], job_id="f", model="paddleocr-vl", engine=engine)

    assert result["engine"]["name"].startswith("PP-OCRv5 (fallback: PaddleOCR-VL 1.6 unavailable here")
    assert result["engine"]["models"] == ["PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec", *LOCAL_ORIENTATION_MODELS]
    [warning] = result["warnings"]
    assert (warning["code"], warning["requested"], warning["ran"]) == ("engine_fallback", "PaddleOCR-VL 1.6", "PP-OCRv5")
    assert warning["reason"] == engine.fallback_reason and "PP-DocLayoutV3" in warning["reason"]
    assert warning["message"] == "PaddleOCR-VL 1.6 is not available in this runtime, so this result comes from PP-OCRv5 instead."
    got = "\n".join(line["text"] for line in result["pages"][0]["lines"])
    assert character_error_rate(got, "\n".join(ENGLISH_PAGES[0])) <= 0.02


def test_fallback_is_off_by_default_and_unavailable_means_a_clear_engine_unavailable_error(settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV.ENGINE_FALLBACK, raising=False)
    assert PaddleSettings.from_env().allow_fallback is False  # fail closed when nothing says otherwise
    monkeypatch.setenv(ENV.ENGINE_FALLBACK, "none")
    assert PaddleSettings.from_env().allow_fallback is False
    monkeypatch.setenv(ENV.ENGINE_FALLBACK, "on")
    assert PaddleSettings.from_env().allow_fallback is True

    with pytest.raises(JobError) as info:
        PaddleOCRVLEngine(settings)
    assert info.value.code == "engine_unavailable" and "PaddleOCR-VL" in info.value.message


class UnbuildablePipeline:
    """Stands in for a pipeline class whose weights this runtime lacks: building it fails (plumbing only)."""

    def __init__(self, **kwargs: Any) -> None:
        raise RuntimeError("PP-DocLayout_plus-L is in no model cache here")


@pytest.fixture
def unbuildable_structure(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The processor's pp-structurev3 engine, built from the environment like on Lambda, with a pipeline that cannot load."""
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    monkeypatch.setitem(engines._factories, "pp-structurev3", lambda: PPStructureV3Engine(pipeline_factory=UnbuildablePipeline))
    engines._instances.pop("pp-structurev3", None)
    yield
    engines._instances.pop("pp-structurev3", None)


def _structure_job(platform: Platform, job_id: str, docs: dict[str, Path]) -> dict[str, Any]:
    message = {"job_id": job_id, "model": "pp-structurev3", "language": "en",
               "input": platform.put_document(job_id, "invoice.png", docs["png"].read_bytes())}
    platform.store.create(NewJob(job_id, "pp-structurev3", message["input"]))
    return message


def test_processor_with_fallback_off_fails_the_job_engine_unavailable_with_the_reason(
    platform: Platform, unbuildable_structure: None, docs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV.ENGINE_FALLBACK, "none")  # what the stack sets on every deployed stage

    assert platform.run_processor(_structure_job(platform, "job-off", docs))["outcome"] == "failed"

    job = platform.job("job-off")
    assert (job["status"], job["error"]["code"]) == ("FAILED", "engine_unavailable")
    assert job["error"]["message"] == "PP-StructureV3 cannot run here: PP-DocLayout_plus-L is in no model cache here"
    assert "warnings" not in job and platform.keys("results/") == []


def test_processor_with_fallback_on_completes_with_the_warning_on_the_item_and_in_result_json(
    platform: Platform, unbuildable_structure: None, docs: dict[str, Path], ppocr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV.ENGINE_FALLBACK, "on")  # what the local stack sets

    assert platform.run_processor(_structure_job(platform, "job-on", docs))["outcome"] == "completed"

    job = platform.job("job-on")
    result = platform.read_json("results/job-on/result.json")
    assert job["status"] == "COMPLETED" and job["result"] == f"s3://{BUCKET}/results/job-on/result.json"
    [warning] = job["warnings"]
    assert result["warnings"] == job["warnings"]
    assert (warning["code"], warning["requested"]) == ("engine_fallback", "PP-StructureV3")
    assert "RuntimeError: PP-DocLayout_plus-L is in no model cache here" in warning["reason"]
    # What really ran (PP-OCRv5, or its local layout substitute where that is installed) is named, never PP-StructureV3.
    assert result["model"] == "pp-structurev3" and result["engine"]["name"].startswith(warning["ran"])
    assert "PP-StructureV3" not in warning["ran"].split(" (")[0].split()
    got = "\n".join(line["text"] for line in result["pages"][0]["lines"])
    assert character_error_rate(got, "\n".join(ENGLISH_PAGES[0])) <= 0.02


def test_endpoint_with_fallback_off_fails_its_ping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    monkeypatch.delenv(ENV.ENGINE_FALLBACK, raising=False)
    app = EndpointApp(lambda: PaddleOCRVLEngine(pipeline_factory=UnbuildablePipeline))

    app.load()

    status, body = app.ping()
    assert status == 500 and body["status"] == "failed"
    assert "engine_unavailable" in body["error"] and "PP-DocLayout_plus-L is in no model cache here" in body["error"]


class SelfDescribingSubstitute:
    """A substitute whose output already carries its own engine_fallback warning (plumbing only)."""

    info = EngineInfo(name="substitute", models=["sub"], version="0")

    def predict(self, path: Path, **kwargs: Any) -> EngineOutput:
        own = engine_fallback_warning(requested="PP-StructureV3", ran="substitute layout", reason="no PP-DocLayout weights")
        return EngineOutput(pages=[], engine=EngineInfo(name="substitute layout", models=["sub"], version="0"), warnings=[own])


class PlainSubstitute(SelfDescribingSubstitute):
    def predict(self, path: Path, **kwargs: Any) -> EngineOutput:
        return EngineOutput(pages=[])


@pytest.mark.parametrize("substitute", [SelfDescribingSubstitute, PlainSubstitute])
def test_an_overridden_fallback_engine_is_described_once(settings: PaddleSettings, substitute: type, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})

    class WithSubstitute(PPStructureV3Engine):
        def _fallback_engine(self) -> Any:
            return substitute()

    output = WithSubstitute(replace(settings, allow_fallback=True), pipeline_factory=UnbuildablePipeline).predict(tmp_path / "unused")

    [warning] = output.warnings
    assert warning["code"] == "engine_fallback" and warning["requested"] == "PP-StructureV3"
    if substitute is SelfDescribingSubstitute:  # it described itself: kept as it is
        assert (warning["ran"], output.engine["name"]) == ("substitute layout", "substitute layout")
    else:  # the layout engine names what ran and adds the warning
        assert warning["ran"] == "substitute" and output.engine["name"].startswith("substitute (fallback: PP-StructureV3")


def test_layout_blocks_keep_document_order_when_no_order_is_given() -> None:
    blocks = layout_blocks([{"block_label": "text", "block_content": "b", "block_bbox": [0, 0, 1, 1]},
                            {"block_label": "text", "block_content": "a", "block_bbox": [0, 0, 1, 1]}])
    assert [b["text"] for b in blocks] == ["b", "a"]


def test_ocr_command_runs_locally_with_fallback_on_and_prints_the_warning(
    docs: dict[str, Path], ppocr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OCR_MODEL_HUB", "off")  # the PaddleOCR-VL weights are in no installed package
    monkeypatch.delenv(ENV.ENGINE_FALLBACK, raising=False)
    monkeypatch.delitem(engines._instances, "paddleocr-vl", raising=False)
    output = tmp_path / "result.json"
    try:
        assert cli.main(["ocr", str(docs["png"]), "--model", "paddleocr-vl", "--output", str(output)]) == 0
    finally:
        engines._instances.pop("paddleocr-vl", None)

    [warning] = json.loads(output.read_text())["warnings"]
    assert (warning["code"], warning["requested"], warning["ran"]) == ("engine_fallback", "PaddleOCR-VL 1.6", "PP-OCRv5")
    assert capsys.readouterr().err.splitlines()[-1] == f"warning: engine_fallback: {warning['message']}"
    assert ENV.ENGINE_FALLBACK not in os.environ  # turned on for this run only

    monkeypatch.setenv(ENV.ENGINE_FALLBACK, "none")  # a user who wants the model or an error
    assert cli.main(["ocr", str(docs["png"]), "--model", "paddleocr-vl"]) == 1
    assert capsys.readouterr().err.startswith("error: engine_unavailable: PaddleOCR-VL 1.6 cannot run here")


def test_the_vl_model_sees_a_turned_page_upright_and_its_blocks_land_on_the_page_as_submitted(
    settings: PaddleSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from PIL import Image

    from tests.documents import render_report_page

    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    engine = PaddleOCRVLEngine(settings, pipeline_factory=RecordingPipeline)
    upright = render_report_page()  # 1240 x 1754
    render_report_page().transpose(Image.Transpose.ROTATE_90).save(tmp_path / "sideways.png")  # turned a quarter left

    result, _ = ocr_document(tmp_path / "sideways.png", job_id="v", model="paddleocr-vl", engine=engine)

    shape, _ = RecordingPipeline.instances[-1].predicted[0]
    assert shape == (upright.height, upright.width, 3)  # the model read the page upright
    [page] = result["pages"]
    assert (page["width"], page["height"], page["rotation"]) == (upright.height, upright.width, 90)
    title = next(b for b in page["blocks"] if b["label"] == "doc_title")
    # [100, 80, 700, 140] on the upright page is, on the page turned a quarter left, x from 80 to 140 and
    # y from 1240 - 700 to 1240 - 100.
    assert title["bbox"] == [80.0, 540.0, 140.0, 1140.0]
    assert result["engine"]["models"] == ["PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B", LOCAL_ORIENTATION_MODELS[0]]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_hub_is_known_in_a_moment_and_says_why() -> None:
    started = time.perf_counter()
    reason = unreachable_hub(addresses=[("127.0.0.1", _closed_port()), ("no-such-host.invalid", 443)])
    assert reason is not None and "127.0.0.1: " in reason and "no-such-host.invalid: " in reason
    assert time.perf_counter() - started < HUB_CHECK_TIMEOUT + 0.5
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert unreachable_hub(addresses=[("no-such-host.invalid", 443), ("127.0.0.1", server.getsockname()[1])]) is None


def test_structure_pipeline_is_not_built_when_its_models_would_come_from_a_hub_that_does_not_answer(
    settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, PaddleX's downloader spent ~25 s failing before the substitute ran; now the build stops at once."""
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{_closed_port()}")  # every hub is reached through it
    RecordingPipeline.instances.clear()
    started = time.perf_counter()
    with pytest.raises(JobError) as info:
        PPStructureV3Engine(replace(settings, allow_hub_download=True), pipeline_factory=RecordingPipeline)
    assert time.perf_counter() - started < HUB_CHECK_TIMEOUT + 2
    assert info.value.code == "engine_unavailable" and "no model hub answers (127.0.0.1: " in info.value.message
    assert "PP-DocLayout_plus-L" in info.value.message and RecordingPipeline.instances == []

    with socket.socket() as proxy:  # a hub that answers: PaddleX is left to download
        proxy.bind(("127.0.0.1", 0))
        proxy.listen()
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
        engine = PPStructureV3Engine(replace(settings, allow_hub_download=True), pipeline_factory=RecordingPipeline)
    assert engine.fallback is None and len(RecordingPipeline.instances) == 1
