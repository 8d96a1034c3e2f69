"""Figures as pictures on the ``pp-structurev3`` route (its local substitute, on real weights) through the CPU
processor against moto: the crop of each picture block is stored beside the result, at the block's box size, and
the block and the page's Markdown link it."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from ocr_platform import engines
from ocr_platform.engines.local_structure import LocalStructureEngine
from tests.conftest import BUCKET, Platform
from tests.documents import LATIN_FONT

PHOTO_BOX = (240, 560, 1000, 1140)


def photo(size: tuple[int, int], seed: int = 7) -> Image.Image:
    """A photo-like picture: a sky gradient, hills, a sun and sensor noise, blurred a little."""
    width, height = size
    rng = np.random.default_rng(seed)
    y = np.linspace(0, 1, height)[:, None, None]
    sky = (np.array([90, 150, 230]) * (1 - y) + np.array([200, 220, 250]) * y) * np.ones((1, width, 1))
    image = Image.fromarray(sky.astype(np.uint8))
    draw = ImageDraw.Draw(image)
    draw.ellipse((width * 0.65, height * 0.1, width * 0.85, height * 0.35), fill=(250, 220, 90))
    for index, colour in enumerate([(60, 120, 60), (40, 95, 45), (30, 70, 35)]):
        top = int(height * (0.45 + 0.12 * index))
        points = [(x, top + int(40 * np.sin(x / (60 + 25 * index) + index))) for x in range(0, width + 20, 20)]
        draw.polygon([*points, (width, height), (0, height)], fill=colour)
    noisy = np.asarray(image, dtype=np.int16) + rng.normal(0, 12, (height, width, 3)).astype(np.int16)
    return Image.fromarray(noisy.clip(0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1.2))


def render_figure_page(size: tuple[int, int] = (1240, 1754)) -> Image.Image:
    """A white A4 page at 150 DPI: a title, a paragraph, a photograph and its caption, another paragraph."""
    page = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(page)
    title = ImageFont.truetype(str(LATIN_FONT.with_name("DejaVuSans-Bold.ttf")), 56)
    body = ImageFont.truetype(str(LATIN_FONT), 32)
    draw.text((120, 150), "Field Survey of the Northern Valley", fill="black", font=title)
    for index, text in enumerate(["The survey team walked the valley floor in early spring and recorded",
                                  "the condition of the meadows, the hedges and the streams below the",
                                  "ridge. The photograph below shows the view from the eastern slope."]):
        draw.text((120, 300 + index * 52), text, fill="black", font=body)
    x0, y0, x1, y1 = PHOTO_BOX
    page.paste(photo((x1 - x0, y1 - y0)), (x0, y0))
    draw.text((240, 1170), "Figure 1. The valley seen from the eastern slope.", fill="black", font=body)
    for index, text in enumerate(["Most of the meadows were in good condition, although two of the streams",
                                  "had changed their course since the last survey and will be mapped again."]):
        draw.text((120, 1300 + index * 52), text, fill="black", font=body)
    return page


@pytest.fixture(scope="module")
def structure_engine(ppocr) -> LocalStructureEngine:
    return LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")


@pytest.fixture
def registered(structure_engine: LocalStructureEngine) -> Iterator[LocalStructureEngine]:
    engines.register_engine("pp-structurev3", lambda: structure_engine)
    yield structure_engine
    engines._factories.pop("pp-structurev3", None)
    engines._instances.pop("pp-structurev3", None)


def test_a_photograph_on_a_page_is_stored_as_a_figure_linked_from_its_block_and_markdown(
    platform: Platform, registered: LocalStructureEngine, tmp_path: Path,
) -> None:
    buffer = io.BytesIO()
    render_figure_page().save(buffer, "PNG")
    job_id = "job-figure"
    message = platform.processing_job(job_id, "pp-structurev3", "page.png", buffer.getvalue())

    assert platform.run_processor(message)["outcome"] == "completed"

    result = platform.read_json(f"results/{job_id}/result.json")
    [page] = result["pages"]
    figures = [block for block in page["blocks"] if block["label"] in ("figure", "image", "chart")]
    assert figures, [block["label"] for block in page["blocks"]]
    assert all(block.get("image") for block in figures)
    keys = platform.keys(f"results/{job_id}/figures/")
    assert keys == sorted(f"results/{job_id}/{block['image']}" for block in figures)
    for block in figures:
        stored = platform.s3.get_object(Bucket=BUCKET, Key=f"results/{job_id}/{block['image']}")
        assert stored["ContentType"] == "image/png"
        crop = Image.open(io.BytesIO(stored["Body"].read()))
        x0, y0, x1, y1 = block["bbox"]
        assert abs(crop.width - (x1 - x0)) <= 2 and abs(crop.height - (y1 - y0)) <= 2
        assert page["markdown"].count(f"]({block['image']})") == 1
    # The photograph is one of them: a crop that covers most of it.
    px0, py0, px1, py1 = PHOTO_BOX
    assert any(min(b["bbox"][2], px1) - max(b["bbox"][0], px0) > 0.8 * (px1 - px0)
               and min(b["bbox"][3], py1) - max(b["bbox"][1], py0) > 0.8 * (py1 - py0) for b in figures)
    assert "valley floor" in page["markdown"]
