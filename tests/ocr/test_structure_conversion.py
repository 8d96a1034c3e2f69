"""PP-StructureV3's own results (PaddleX 3.7.2's ``LayoutParsingResultV2``, built here from its real classes, with
the Markdown and JSON its own code writes) become result pages that lose no text, and a table PP-StructureV3 reads
over three pages comes back as one table with its header once.

PP-StructureV3's weights cannot be had offline, so its results are built from the objects its pipeline makes:
``LayoutBlock``s in ``parsing_res_list``, the page's ``OCRResult`` (``overall_ocr_res``, which holds every line)
and the layout ``DetResult``, with the model settings the ``PPStructureV3`` class runs with (its
``markdown_ignore_labels`` read from PaddleX's own PP-StructureV3.yaml). Its Markdown then writes a picture as an
``<img>`` with no text, and a table centred in a ``div``, as the real pipeline does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from ocr_platform.core.tables import html_table_text
from ocr_platform.engines.conversion import layout_page_content
from ocr_platform.engines.ppstructurev3 import PPStructureV3Engine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.engines.settings import PaddleSettings

paddlex = pytest.importorskip("paddlex")
from paddlex.inference.models.object_detection.result import DetResult  # noqa: E402
from paddlex.inference.pipelines.layout_parsing.layout_objects import LayoutBlock  # noqa: E402
from paddlex.inference.pipelines.layout_parsing.result_v2 import LayoutParsingResultV2  # noqa: E402
from paddlex.inference.pipelines.ocr.result import OCRResult  # noqa: E402
from PIL import Image  # noqa: E402

REPORT = Path(__file__).parents[1] / "documents" / "public" / "warn-report-3-pages.pdf"
CONFIG = Path(paddlex.__file__).parent / "configs" / "pipelines" / "PP-StructureV3.yaml"
IGNORED_IN_MARKDOWN = yaml.safe_load(CONFIG.read_text())["markdown_ignore_labels"]
PICTURES = ("image", "chart", "seal")

Box = tuple[int, int, int, int]


def paddlex_page(image: np.ndarray, blocks: list[tuple[str, Box, str]], lines: list[tuple[str, Box]]) -> LayoutParsingResultV2:
    """A ``LayoutParsingResultV2`` as PP-StructureV3 makes it: ``blocks`` (label, box, content) in reading order
    and the page's OCR ``lines``."""
    parsed = []
    for index, (label, box, content) in enumerate(blocks):
        block = LayoutBlock(label=label, bbox=list(box))
        block.content, block.index, block.order_index = content, index, index + 1
        if label in ("table", "seal", "formula", "chart", "image", "figure", "header_image", "footer_image"):  # as PaddleX crops them
            x0, y0, x1, y1 = box
            block.image = {"path": f"imgs/img_in_{label}_box_{x0}_{y0}_{x1}_{y1}.jpg", "img": Image.fromarray(image[y0:y1, x0:x1])}
        parsed.append(block)
    polys = [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) for _, (x0, y0, x1, y1) in lines]
    ocr = OCRResult({
        "input_path": None, "page_index": None, "doc_preprocessor_res": {}, "dt_polys": polys, "text_det_params": {},
        "model_settings": {"use_doc_preprocessor": False, "use_textline_orientation": True}, "text_type": "general",
        "textline_orientation_angles": [0] * len(lines), "text_rec_score_thresh": 0.0, "return_word_box": False,
        "rec_texts": [text for text, _ in lines], "rec_scores": [0.95] * len(lines), "rec_polys": polys,
        "rec_boxes": np.array([box for _, box in lines]).reshape(-1, 4), "rec_labels": ["text"] * len(lines), "input_img": image,
    })
    layout = DetResult({"input_path": None, "page_index": None, "input_img": image,
                        "boxes": [{"cls_id": 0, "label": label, "score": 0.9, "coordinate": list(box)} for label, box, _ in blocks]})
    height, width = image.shape[:2]
    return LayoutParsingResultV2({
        "input_path": None, "page_index": None, "page_count": None, "width": width, "height": height,
        "doc_preprocessor_res": {"output_img": image}, "layout_det_res": layout, "overall_ocr_res": ocr,
        "table_res_list": [], "seal_res_list": [], "chart_res_list": [], "formula_res_list": [], "imgs_in_doc": [],
        "parsing_res_list": parsed,
        "model_settings": {"use_doc_preprocessor": False, "use_seal_recognition": False, "use_table_recognition": True,
                           "use_formula_recognition": False, "use_chart_recognition": False, "use_region_detection": True,
                           "markdown_ignore_labels": IGNORED_IN_MARKDOWN},
    })


def test_the_text_in_picture_regions_is_kept_in_their_blocks_and_after_them_in_the_markdown() -> None:
    image = np.full((1400, 1000, 3), 255, np.uint8)
    lines = [
        ("Annual report", (100, 40, 600, 90)),
        ("Sales rose in every region this year.", (100, 120, 900, 150)),
        ("Q1 120", (150, 250, 300, 280)), ("Q4 180", (600, 250, 750, 280)),  # in the image
        ("North 40%", (150, 600, 350, 630)),  # in the chart
        ("APPROVED", (700, 1000, 880, 1040)),  # in the seal
        ("E = mc2", (100, 1200, 300, 1240)),  # in the formula, whose recognition is off
        ("ACME Corp", (820, 10, 980, 30)),  # in the header logo
        ("Figure 1. Sales by quarter.", (100, 470, 700, 500)),
    ]
    blocks = [
        ("header_image", (800, 0, 1000, 40), ""),
        ("doc_title", (100, 40, 600, 90), "Annual report"),
        ("text", (100, 120, 900, 150), "Sales rose in every region this year."),
        ("image", (100, 200, 900, 460), ""),
        ("figure_title", (100, 470, 700, 500), "Figure 1. Sales by quarter."),
        ("chart", (100, 550, 900, 900), ""),
        ("seal", (650, 950, 950, 1100), ""),
        ("formula", (80, 1180, 320, 1260), "E = mc2"),  # PaddleX puts the OCR text of some regions in the block
    ]
    result = paddlex_page(image, blocks, lines)
    # The premise: PaddleX's Markdown has no picture text, not even where the block has it.
    assert "Q1 120" not in result.markdown["markdown_texts"] and "mc2" not in result.markdown["markdown_texts"]

    content = layout_page_content(result)

    by_label = {block["label"]: block for block in content["blocks"]}
    assert by_label["image"]["text"] == "Q1 120 Q4 180"
    assert (by_label["chart"]["text"], by_label["seal"]["text"], by_label["header_image"]["text"]) == ("North 40%", "APPROVED", "ACME Corp")
    assert by_label["text"]["text"] == "Sales rose in every region this year."  # the line beside the picture stays its own
    blocks_text = "\n".join(block["text"] for block in content["blocks"])
    assert all(text in blocks_text for text, _ in lines)
    markdown = content["markdown"]
    assert all(text in markdown for text, _ in lines if text != "ACME Corp")  # a header picture: its block only
    assert "ACME Corp" not in markdown
    for label, text in (("image", "Q1 120 Q4 180"), ("chart", "North 40%"), ("seal", "APPROVED"), ("formula", "E = mc2")):
        assert markdown.index(f"img_in_{label}_box") < markdown.index(text), label
    assert markdown.index("Q4 180") < markdown.index("Figure 1.")


HEADER = ["Notice Date", "Company", "City"]


def table_html(rows: list[list[str]]) -> str:
    return "<html><body><table>" + "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows) + "</table></body></html>"


def report_rows(first: int, count: int) -> list[list[str]]:
    return [[f"07/{n:02d}/2015", f"Company {n}", f"City {n}"] for n in range(first, first + count)]


class ThreePageTable:
    """Stands in for PaddleOCR's ``PPStructureV3`` class: page by page, the results its pipeline makes of a table
    printed over three pages (the header repeated on each, a footer under the first part)."""

    def __init__(self, **kwargs: Any) -> None:
        self.pages = 0

    def predict(self, image: np.ndarray, **kwargs: Any) -> list[LayoutParsingResultV2]:
        self.pages += 1
        rows = [HEADER, *report_rows(10 * self.pages, 10)]
        blocks = [("table", (60, 200, 1500, 1100), table_html(rows))]
        if self.pages == 1:
            blocks.insert(0, ("doc_title", (600, 40, 1000, 90), "WARN Report"))
            blocks.append(("footer", (60, 1150, 400, 1180), "Page 1"))
        return [paddlex_page(np.asarray(image), blocks, [])]


def test_a_table_pp_structurev3_reads_over_three_pages_is_one_table_with_its_header_once(
    ocr_settings: PaddleSettings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("ocr_platform.engines.resolver.ModelResolver.kwargs", lambda self, role, name: {f"{role}_model_name": name})
    engine = PPStructureV3Engine(ocr_settings, pipeline_factory=ThreePageTable)

    result, _ = ocr_document(REPORT, job_id="report", model="pp-structurev3", engine=engine, options={"text_layer": "ignore"})

    first, second, third = result["pages"]
    head = first["blocks"][1]
    assert html_table_text(head["html"]).split("\n") == ["\t".join(row) for row in [HEADER, *report_rows(10, 30)]]
    assert second["blocks"][0]["continued_from"] == third["blocks"][0]["continued_from"] == {"page": 1, "block": 1, "header_rows": 1}
    assert html_table_text(second["blocks"][0]["html"]).split("\n")[1] == "\t".join(report_rows(20, 1)[0])
    markdown = "\n\n".join(page["markdown"] for page in result["pages"])
    assert markdown.count("<table") == 1 and markdown.count("Notice Date") == 1
    assert all(f"Company {n}" in markdown for n in range(10, 40))
    # No empty centring div left behind: a comment says where the table is.
    assert second["markdown"] == third["markdown"] == "<!-- table continued from page 1 -->"


def test_a_picture_the_markdown_has_no_img_of_gets_the_text_read_in_it_and_a_blocks_own_text_is_left_alone() -> None:
    """As PaddleOCR-VL writes a formula (LaTeX, no ``<img>``), its block's own text stays where the pipeline put it;
    text read here for a picture the Markdown does not show ends the Markdown, so it is not lost."""
    from ocr_platform.engines.conversion import keep_picture_text

    line = {"text": "Q1 120", "polygon": [[10, 150], [90, 150], [90, 170], [10, 170]], "score": 0.9}
    formula = {"label": "formula", "bbox": [0.0, 400.0, 200.0, 450.0], "text": "E=mc^{2}"}
    image = {"label": "image", "bbox": [0.0, 100.0, 200.0, 300.0], "text": ""}
    markdown = "# Physics\n\n$$E = mc^{2}$$"

    assert keep_picture_text([formula, image], [line], markdown) == markdown + "\n\nQ1 120"
    assert (formula["text"], image["text"]) == ("E=mc^{2}", "Q1 120")
