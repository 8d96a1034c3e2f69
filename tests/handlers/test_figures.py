"""Figures as pictures through both routes against moto, with an engine that reads the page's size and says where
its pictures are (real layout is tested in tests/ocr/test_figures.py): the CPU processor (a whole job and the
chunks of a split one) and the GPU endpoint's answer stored by the completion function store each crop at
``results/{job_id}/figures/``, and the jobs API links them."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ocr_platform import engines
from ocr_platform.core.results import Block, EngineInfo
from ocr_platform.document.intake import open_document
from ocr_platform.engines import EngineOutput
from ocr_platform.engines.regions import page_markdown
from ocr_platform.gpu.model_server import EndpointApp
from ocr_platform.jobs.store import NewJob
from tests.conftest import BUCKET, Platform
from tests.handlers.test_api import ALICE, call
from tests.handlers.test_fan_out import RecordedInvokes, invokes  # noqa: F401 (a fixture)
from tests.handlers.test_gpu_fan_out import _request, _serve
from tests.ocr.test_figures import photo


def picture_pdf(page_count: int) -> bytes:
    """Pages of 300 x 200 points, each with a photograph at the same place."""
    pages = []
    for index in range(page_count):
        page = Image.new("RGB", (600, 400), "white")
        page.paste(photo((300, 200), seed=index), (120, 80))
        pages.append(page)
    buffer = io.BytesIO()
    pages[0].save(buffer, "PDF", resolution=144.0, save_all=True, append_images=pages[1:])
    return buffer.getvalue()


class FigureEngine:
    """Renders the selected pages as intake does and answers, for each, a title and two pictures (a figure with
    text read inside it, a chart without) at set shares of the page; not OCR."""

    info = EngineInfo(name="figure-test-engine", models=["none"], version="0")

    def predict(
        self, path: Path, *, language: str = "en", pages: str | None = None, options: dict | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        result_pages: list[Any] = []
        with open_document(path, pages=pages) as document:
            for image in document.pages():
                width, height = image.image.size
                blocks: list[Block] = [
                    {"label": "title", "bbox": [10.0, 5.0, 0.8 * width, 30.0], "text": f"Page {image.page}"},
                    {"label": "figure", "bbox": [0.2 * width, 0.2 * height, 0.7 * width, 0.7 * height], "text": "Q1 Q2"},
                    {"label": "chart", "bbox": [0.1 * width + 0.4, 0.75 * height, 0.5 * width, 0.95 * height - 0.3]},
                ]
                result_pages.append({"page": image.page, "width": width, "height": height, "scale": image.scale,
                                     "lines": [], "blocks": blocks, "markdown": page_markdown(blocks)})
        return EngineOutput(pages=result_pages, raw={}, timings={"predict": 0.01})


@pytest.fixture
def engine(platform: Platform) -> Iterator[FigureEngine]:
    instance = FigureEngine()
    engines.register_engine("pp-structurev3", lambda: instance)
    yield instance
    engines._factories.pop("pp-structurev3", None)
    engines._instances.pop("pp-structurev3", None)


def _job(platform: Platform, job_id: str, document: bytes, *, model: str = "pp-structurev3", via: str = "lambda") -> dict[str, Any]:
    message = {"job_id": job_id, "model": model, "input": platform.put_document(job_id, "doc.pdf", document), "language": "en"}
    platform.store.create(NewJob(job_id, model, message["input"], owner=ALICE))
    platform.store.mark_processing(job_id, via)
    return message


def assert_figures_stored(platform: Platform, job_id: str, pages: list[int]) -> None:
    """Each page's two pictures are stored as PNGs of their block's box size, linked from the block and once from
    the page's Markdown (before the picture's text), and the pictures' text stays in the result."""
    result = platform.read_json(f"results/{job_id}/result.json")
    assert [page["page"] for page in result["pages"]] == pages
    expected = []
    for page in result["pages"]:
        figure, chart = page["blocks"][1:]
        n = page["page"]
        assert (figure["image"], chart["image"]) == (f"figures/{n:05d}-01.png", f"figures/{n:05d}-02.png")
        assert "image" not in page["blocks"][0]
        for block in (figure, chart):
            stored = platform.s3.get_object(Bucket=BUCKET, Key=f"results/{job_id}/{block['image']}")
            assert stored["ContentType"] == "image/png"
            crop = Image.open(io.BytesIO(stored["Body"].read()))
            assert crop.format == "PNG"
            x0, y0, x1, y1 = block["bbox"]
            assert abs(crop.width - (x1 - x0)) <= 2 and abs(crop.height - (y1 - y0)) <= 2
            assert page["markdown"].count(f"]({block['image']})") == 1
            expected.append(f"results/{job_id}/{block['image']}")
        assert f"![figure]({figure['image']})\n\nQ1 Q2" in page["markdown"]
        assert figure["text"] == "Q1 Q2"
    assert platform.keys(f"results/{job_id}/figures/") == sorted(expected)
    assert "figures" in result["timings"]


def test_the_cpu_processor_stores_each_picture_beside_the_result(platform: Platform, engine: FigureEngine) -> None:
    message = _job(platform, "job-fig1", picture_pdf(2))

    assert platform.run_processor(message)["outcome"] == "completed"

    assert_figures_stored(platform, "job-fig1", [1, 2])
    # The crop is the page as the engine read it: the photograph's pixels, not the white page around it.
    key = "results/job-fig1/figures/00001-01.png"
    crop = Image.open(io.BytesIO(platform.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())).convert("L")
    assert np.asarray(crop).mean() < 230


def test_each_chunk_of_a_split_job_stores_its_pages_pictures(
    platform: Platform, engine: FigureEngine, invokes: RecordedInvokes,  # noqa: F811
) -> None:
    message = _job(platform, "job-fig2", picture_pdf(12))
    assert platform.run_processor(message)["outcome"] == "fanned_out"
    events = invokes.events
    assert len(events) > 1
    for event in events[:-1]:
        assert platform.run_processor(event)["outcome"] == "chunk_done"
    assert platform.run_processor(events[-1])["outcome"] == "completed"

    assert_figures_stored(platform, "job-fig2", list(range(1, 13)))


def test_the_gpu_answer_carries_the_pictures_and_the_completion_function_stores_them(platform: Platform) -> None:
    endpoint = EndpointApp(FigureEngine)
    endpoint.load()
    message = _job(platform, "job-fig3", picture_pdf(2), model="paddleocr-vl", via="sagemaker")

    note = _serve(platform, endpoint, _request(message), n=0)
    with zipfile.ZipFile(io.BytesIO(platform.s3.get_object(Bucket=BUCKET, Key="async/outputs/job-fig3-0.out")["Body"].read())) as answer:
        names = answer.namelist()
        manifest = json.loads(answer.read("answer.json"))
    assert manifest["figures"] == ["figures/00001-01.png", "figures/00001-02.png", "figures/00002-01.png", "figures/00002-02.png"]
    assert set(manifest["figures"]) <= set(names)
    assert platform.keys("results/job-fig3/") == []  # the container stores nothing

    assert platform.publish("success", note) == {"outcomes": ["completed"]}

    assert_figures_stored(platform, "job-fig3", [1, 2])


def test_an_answer_naming_a_figure_outside_figures_is_refused(platform: Platform) -> None:
    from ocr_platform.core.errors import JobError
    from ocr_platform.gpu.endpoint_payloads import EndpointAnswer, build_answer

    archive = build_answer({"job_id": "j"}, chunk=None, page_images={}, pdf=None, figures={"figures/../../x.png": b"png"})
    with pytest.raises(JobError, match="not a valid result archive"):
        EndpointAnswer(io.BytesIO(archive), max_result_bytes=1024)


def test_the_figures_left_out_past_the_answers_room_have_no_image(platform: Platform, tmp_path: Path) -> None:
    from ocr_platform.document.intake import IntakeLimits
    from ocr_platform.outputs.figures import figures_of

    path = tmp_path / "doc.pdf"
    path.write_bytes(picture_pdf(1))
    def read() -> Any:
        return {"job_id": "j", "pages": FigureEngine().predict(path).pages, "timings": {}}

    room = len(figures_of(read(), path, IntakeLimits())[0].png)  # the first crop's size: no room for the second
    result = read()
    [first] = figures_of(result, path, IntakeLimits(), max_bytes=room)
    blocks = result["pages"][0]["blocks"]
    assert (first.name, blocks[1]["image"], "image" in blocks[2]) == ("figures/00001-01.png", "figures/00001-01.png", False)
    assert "figures/00001-02.png" not in result["pages"][0]["markdown"]


def test_the_jobs_api_links_the_figures(platform: Platform, engine: FigureEngine) -> None:
    message = _job(platform, "job-fig4", picture_pdf(1))
    assert platform.run_processor(message)["outcome"] == "completed"

    status, answer = call("GET", "/jobs/job-fig4/result", ALICE)

    assert status == 200
    assert [(f["page"], f["name"]) for f in answer["figures"]] == [(1, "figures/00001-01.png"), (1, "figures/00001-02.png")]
    import requests

    body = requests.get(answer["figures"][0]["image"], timeout=30).content
    assert Image.open(io.BytesIO(body)).format == "PNG"
