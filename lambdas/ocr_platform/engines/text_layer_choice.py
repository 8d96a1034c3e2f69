"""Whether to believe a page's text layer, decided against the page image, and what to OCR beside it.

``text_layer: auto`` reads a PDF page's own text where it is real and recognises only what it lacks.
"Real" is measured, not trusted (``TextLayerChoice.read``):

1. **Readable, line by line.** A character whose font gives no Unicode value is pdfium's guess; it counts as mapped
   where the guess round-trips through the embedded font's own character map (``document.font_map``). When more than
   ``MAX_UNMAPPED_SHARE`` of the page's characters still lack one, each line holding them is judged
   (``_without_unverified``): one in a script the recogniser does not read keeps its mapped part where that stands on
   its own (``layer_lines.trusted_part``), else goes; of the others the longest are recognised, and unless all agree
   (``engines.layer_lines``: as written, or folded, Cyrillic and Greek read as their Latin look-alikes) they are
   dropped and their ink is OCR'd like any the layer lacks; a layer more than ``MOSTLY_UNMAPPED`` unmapped keeps no
   mapped part alone. A hidden layer with that many unmapped is not used, but for invisible text over a page that
   draws nothing there.
2. **Truthful, font by font.** A sample of the layer's lines is recognised from the image and compared with what the
   layer says (``layer_lines.read_agrees``). A visible layer can only be wrong through a font's character map, so each
   font is checked once per document (``verified_fonts``); a font whose sampled line the ink contradicts loses its
   lines on the page (OCR reads their ink) but those the recogniser cannot read, the rest of the layer stays; a page
   left with no line is OCR'd whole. A
   hidden layer (an invisible render mode or text under a page-sized image: an earlier OCR) is checked on every page,
   with ``HIDDEN_SAMPLE`` lines, and rejected whole. A line with no ink to read (a font that is not embedded and that
   this machine cannot draw) is not judged. A recogniser cannot judge a line in a script it does not read
   (``scripts``, from ``engines.scripts``; nor the digits of a font whose lettered lines are all in such a script):
   such lines are not sampled, and a visible line whose characters all map
   to Unicode is trusted, unless the recogniser reads one of them confidently (``CONFIDENT_READ``) as something
   sharing almost nothing with it (``layer_lines.explained``): then the ink is in a script it reads and the layer says
   otherwise. raw.json's ``layer_check`` says what decided (``recognized_sample``, ``verified_fonts``,
   ``script_not_covered``, ``nothing_to_sample``, ``not_drawn``), ``dropped_lines`` the lines left to OCR and why,
   and the page its ``script`` (``engines.scripts``).
3. **Complete.** The ink the layer lacks is found on the render (``engines.missing_ink``: an ink mask minus the
   layer's line boxes, without specks, rules, frames and the strokes of diagrams), grouped into regions. A
   layer that covers less than ``MIN_COVERAGE`` of the page's text ink is not used.
4. **Read only what is missing, cheaply.** The regions are cut from the page with the layer's lines painted
   out (so OCR reads only what the layer lacks). A region no taller than ``LINE_REGION_HEIGHT`` line heights
   is one line: it is recognised directly, all such regions of a page in one batch, and kept when it reads as
   text (``MIN_REGION_SCORE``, ``missing_ink.MIN_REGION_CHARS`` letters or digits). A taller region goes to
   ``read_region``, the engine's own page reader (detection and recognition).

**Layout engines** (``layout=True``: PP-StructureV3, its local substitute, PaddleOCR-VL) read every page
whole, so layout still comes from the image; ``read_layout`` then gives each text block that the layer
covers the layer's text (tables, figures and formulas keep the model's), and the page's lines are the
layer's plus the OCR lines it lacks. Their truthfulness sample is compared with what the engine itself read
at the same place (its lines, or the block holding the line), so no second recogniser is needed.

A rejected layer gives no content, and the caller OCRs the whole page, exactly as ``text_layer: ignore``
would. Otherwise the page's lines are the layer's lines plus the OCR lines of the regions, and its
``text_source`` is ``text_layer`` or ``mixed``. A region that repeats on every page (a letterhead, a
logo) is read once per document: regions are snapped to a grid and keyed by a digest of their pixels.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ocr_platform.core.results import Line
from ocr_platform.core.words import Word, mapped_line
from ocr_platform.document.intake import PageImage
from ocr_platform.document.text_layer import LayerLine, TextLayer
from ocr_platform.engines.conversion import PageContent
from ocr_platform.engines.layer_lines import (
    MIN_SAMPLE_CHARS,
    agreement,
    explained,
    font_sample,
    foreign_fonts,
    foreign_to,
    has_ink,
    hidden_sample,
    keeps_to_a_script,
    mixed_script,
    mostly_mapped,
    offset,
    read_agrees,
    sampleable,
    trusted_part,
    unjudgeable,
    unlettered_in,
)
from ocr_platform.engines.layer_reads import (
    ConfidentReads,
    ReadSample,
    Recognize,
    centre_in,
    confident_reads,
    line_crop,
    read_by_engine,
    recognized_sample,
)
from ocr_platform.engines.missing_ink import MIN_REGION_CHARS, Box, median_height, painted_out, uncovered_regions
from ocr_platform.engines.regions import line_bbox, overlap_area
from ocr_platform.engines.scripts import dominant_script, script_language

TextSource = Literal["text_layer", "ocr", "mixed"]
#: Reads one page image (a region of a page) and returns its content in that image's pixels.
ReadRegion = Callable[[PageImage], PageContent]

#: Share of a layer's characters that may lack a Unicode mapping before its lines are judged one by one.
MAX_UNMAPPED_SHARE = 0.02
#: A visible layer with more than this share of its characters lacking a Unicode mapping keeps no line for its mapped part
#: alone: its fonts' maps are broken, and what they do map is no more to be trusted (pdf.js's ``complex_ttf_font.pdf``:
#: 61 %); its lines stay only where their ink reads as the layer says.
MOSTLY_UNMAPPED = 0.5
#: A line in a script the recogniser does not read, which it nonetheless reads with this score (0..1), is ink in a
#: script it does read: the layer's script is false (a font whose map sends Cyrillic glyphs to Hangul code points).
CONFIDENT_READ = 0.85
#: Lines in a script the recogniser does not read that are recognised for that check, per page.
FOREIGN_PROBE = 3
#: The layer's share of the page's text ink below which the layer is not used (it covers too little).
MIN_COVERAGE = 0.25
#: OCR lines from regions scoring below this are dropped (a region may be a picture, not text).
MIN_REGION_SCORE = 0.6
#: A region at most this many line heights tall is one line, recognised without detection.
LINE_REGION_HEIGHT = 2.0
#: Blocks whose text stays the model's with a layer: their structure (cells, markup) is the model's reading.
MODEL_TEXT_LABELS = frozenset({"table", "formula", "figure", "image", "chart", "seal"})


@dataclass
class LayerReading:
    """One page read with its text layer.

    Attributes:
        content: the page's lines (layer lines first in their order, region lines placed by position);
            ``None`` when the layer is not used and the whole page is to be read by OCR.
        source: ``text_layer`` (every line from the layer), ``mixed`` (some from OCR of regions) or
            ``ocr`` (the layer is not used).
        raw: what was decided and why, for raw.json (``reason`` when the layer is not used).
    """

    content: PageContent | None
    source: TextSource
    raw: dict[str, Any]


@dataclass
class TextLayerChoice:
    """The per-document state of ``text_layer: auto`` (see the module docstring).

    Args:
        recognize: recognises line crops: the truthfulness sample and one-line regions (page engines).
        layout: the engine finds layout and reads every page whole (``read_layout``).
        scripts: the scripts the recogniser reads (``engines.scripts.covered_scripts``); ``None``: every line
            is sampled, whatever its script.

    Attributes:
        verified_fonts: fonts of a visible layer whose sample agreed with the image.
        mismatched: pages read from their layer whose script is not in ``scripts``, by script (for the
            ``language_mismatch`` warning).
        timings: ``layer_check`` (sample recognition and ink test) and ``layer_ocr`` (regions) in seconds.
    """

    recognize: Recognize | None = None
    layout: bool = False
    scripts: frozenset[str] | None = None
    verified_fonts: set[str] = field(default_factory=set)
    repaired: dict[int, int] = field(default_factory=dict)
    mismatched: dict[str, list[int]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=lambda: {"layer_check": 0.0, "layer_ocr": 0.0})
    _regions: dict[str, list[Line]] = field(default_factory=dict)

    def read(self, image: PageImage, layer: TextLayer, read_region: ReadRegion) -> LayerReading:
        """The page read from its layer plus OCR of what the layer lacks, or why the layer is not used."""
        if self.recognize is None:
            raise ValueError("TextLayerChoice.read needs recognize (a page engine's recogniser); layout engines call read_layout")
        verdict = self._judge(image, layer, recognized_sample(image, self.recognize), confident_reads(image, self.recognize))
        if isinstance(verdict, str):
            return _rejected(verdict)
        regions, coverage, check, layer, dropped = verdict
        reading = time.perf_counter()
        if regions:
            region_lines = self._read_regions(
                painted_out(image, layer.lines), regions, read_region, self.recognize, line_height=median_height(layer.lines)
            )
        else:
            region_lines = []
        region_lines = [line for line in region_lines if not _repeats_layer(line, layer.lines)]
        self.timings["layer_ocr"] += time.perf_counter() - reading
        lines = _in_reading_order([_as_line(line) for line in layer.lines], region_lines)
        source: TextSource = "mixed" if region_lines else "text_layer"
        content: PageContent = {"lines": lines, **self._script(image.page, layer)}
        raw = {
            "source": source, "layer_lines": len(layer.lines), "ocr_regions": [list(box) for box in regions],
            "coverage": round(coverage, 4), "layer_check": check, **self._script(image.page, layer, record=False),
            **_layer_notes(layer, dropped), **({"replaced_chars": layer.replaced} if layer.replaced else {}),
        }
        self._note_repairs(image.page, layer)
        return LayerReading(content=content, source=source, raw=raw)

    def read_layout(self, image: PageImage, layer: TextLayer, content: PageContent) -> LayerReading:
        """A layout engine's reading of the page (``content``) with the layer's text in the blocks it covers."""
        verdict = self._judge(image, layer, read_by_engine(content), None)
        if isinstance(verdict, str):
            return _rejected(verdict)
        regions, coverage, check, layer, dropped = verdict
        self._note_repairs(image.page, layer)
        from ocr_platform.engines.regions import page_markdown

        blocks, from_layer, from_ocr = [], 0, 0
        for block in content.get("blocks", []):
            inside = [line for line in layer.lines if "bbox" in block and centre_in(line.box, block["bbox"])]
            missing = any(overlap_area(region, block["bbox"]) > 0 for region in regions) if "bbox" in block else True
            if inside and not missing and block.get("label") not in MODEL_TEXT_LABELS:
                block = {**block, "text": "\n".join(line.text for line in inside)}
                from_layer += 1
            elif block.get("text", "").strip():
                from_ocr += 1
            blocks.append(block)
        ocr_lines = [line for line in content.get("lines", []) if not _repeats_layer(line, layer.lines)]
        layered: PageContent = {
            **content, "lines": _in_reading_order([_as_line(line) for line in layer.lines], ocr_lines), "blocks": blocks,
            **self._script(image.page, layer),
        }
        if from_layer:
            layered["markdown"] = page_markdown(blocks)
        source: TextSource = "mixed" if from_ocr or ocr_lines else "text_layer"
        raw = {
            "source": source, "layer_lines": len(layer.lines), "blocks_from_layer": from_layer, "coverage": round(coverage, 4),
            "layer_check": check, **self._script(image.page, layer, record=False), **_layer_notes(layer, dropped),
        }
        return LayerReading(content=layered, source=source, raw=raw)

    def _script(self, page: int, layer: TextLayer, *, record: bool = True) -> PageContent:
        """``script`` (and ``language`` where the script names one) of a page read from its layer; with ``record``,
        a script the recogniser does not read is noted in ``mismatched``."""
        script = dominant_script(*(line.text for line in layer.lines))
        if script is None:
            return {}
        if record and self.scripts is not None and script not in self.scripts and page not in self.mismatched.get(script, []):
            self.mismatched.setdefault(script, []).append(page)
        found: PageContent = {"script": script}
        language = script_language(script)
        if language:
            found["language"] = language
        return found

    def _judge(
        self, image: PageImage, layer: TextLayer, read_sample: ReadSample, confident: ConfidentReads | None
    ) -> str | tuple[list[Box], float, str, TextLayer, list[dict[str, Any]]]:
        """A reason not to use the layer, or the regions it lacks, its share of the page's text ink, which check decided
        that it is true, the layer without the lines found untrue (``dropped``, each with why: their ink is read by OCR
        as missing), timed as ``layer_check``."""
        started = time.perf_counter()
        try:
            if layer.empty:
                return "the page has no text layer"
            dropped: list[dict[str, Any]] = []
            unmapped_share = layer.unmapped_share
            if unmapped_share > MAX_UNMAPPED_SHARE:
                if layer.hidden and _over_blank(image, layer) and keeps_to_a_script(*(line.text for line in layer.lines)):
                    return [], 1.0, "not_drawn", layer, dropped  # invisible text over a blank page: all the page has
                if layer.hidden:
                    return f"{unmapped_share:.0%} of the layer's characters have no Unicode mapping"
                layer = self._without_unverified(layer, read_sample, dropped)
                if layer.empty:
                    return f"{unmapped_share:.0%} of the layer's characters have no Unicode mapping, and its ink reads otherwise"
            foreign = self._foreign_lines(layer)
            if foreign:
                false_script = _false_script(foreign, confident)
                if false_script:
                    return false_script
            check, wrong = self._disagreement(layer, read_sample, exclude=foreign)
            if wrong:
                unjudged = {id(line) for line in foreign}  # a contradicted font's lines OCR cannot read either stay
                kept = [line for line in layer.lines if id(line) in unjudged or line.font not in wrong and line.text not in wrong]
                if layer.hidden or not any(line.text.strip() for line in kept):
                    return check
                dropped += [{"text": line.text, "reason": check} for line in layer.lines if line not in kept]
                layer, check = replace(layer, lines=kept), "recognized_sample"
            regions, coverage = uncovered_regions(image, layer.lines)
            if coverage < MIN_COVERAGE:
                return f"the layer covers {coverage:.0%} of the page's text"
            return regions, coverage, "script_not_covered" if foreign else check, layer, dropped
        finally:
            self.timings["layer_check"] += time.perf_counter() - started

    def _without_unverified(self, layer: TextLayer, read_sample: ReadSample, dropped: list[dict[str, Any]]) -> TextLayer:
        """The layer with its lines that hold characters lacking a Unicode mapping (pdfium guessed them from the font,
        right as often as not) judged by the ink. A line whose mapped letters are in a script the recogniser does not
        read keeps those letters alone where they stand on their own (``layer_lines.trusted_part``: OCR could only
        misread it); one with no such part is dropped (its ink is OCR'd, with a ``language_mismatch`` warning). Of the
        others, the longest ``HIDDEN_SAMPLE`` are recognised (folded: ``layer_lines``); all of them agreeing (as read, or
        without their unmapped characters: a symbol font's private-use codes) keeps them, else they are all dropped. Each
        change is noted in ``dropped``."""
        suspects = [line for line in layer.lines if line.unmapped]
        broken = layer.unmapped_share > MOSTLY_UNMAPPED  # what such fonts do map is no more to be trusted
        partial = {id(line): part for line in suspects if not broken and (part := trusted_part(line, self.scripts)) is not None}
        dropped += [
            {"text": line.text, "kept": part.text, "reason": "characters without a Unicode mapping, in a script the recogniser does not read: left out"}
            for line in suspects if (part := partial.get(id(line))) is not None
        ]
        layer = replace(layer, lines=[partial.get(id(line)) or line for line in layer.lines])
        suspects = [line for line in suspects if id(line) not in partial]
        unjudged = {id(line) for line in suspects if unjudgeable(line.text, self.scripts)}  # no part to trust, nothing to read it by
        reason = "characters without a Unicode mapping, in a script the recogniser does not read"
        dropped += [{"text": line.text, "reason": reason} for line in suspects if id(line) in unjudged]
        layer = replace(layer, lines=[line for line in layer.lines if id(line) not in unjudged])
        suspects = [line for line in suspects if id(line) not in unjudged]
        sample = hidden_sample(suspects)
        reads = dict(zip(map(id, sample), read_sample(sample), strict=True)) if sample else {}
        if not suspects or any(read is not None for read in reads.values()) and all(
            any(read_agrees(text, read, self.scripts) for text in (line.text, line.mapped.text if line.mapped else ""))
            for line in sample if (read := reads[id(line)]) is not None
        ):
            return layer
        reason = "characters without a Unicode mapping" + (", and the ink reads otherwise" if any(reads.values()) else "")
        dropped += [{"text": line.text, "reason": reason} for line in suspects]
        doubted = {id(line) for line in suspects}
        return replace(layer, lines=[line for line in layer.lines if id(line) not in doubted])

    def _note_repairs(self, page: int, layer: TextLayer) -> None:
        if layer.replaced:
            self.repaired[page] = layer.replaced

    def _foreign_lines(self, layer: TextLayer) -> list[LayerLine]:
        """The lines in a script the recogniser does not read, when the layer may be trusted for them: visible, and
        most characters of the line mapped to Unicode (``layer_lines.mostly_mapped``); with them the lines without
        letters of a font whose lettered lines are all such (``layer_lines.foreign_fonts``). A hidden layer is sampled whole."""
        if self.scripts is None or layer.hidden:
            return []
        scripts = self.scripts
        fonts = foreign_fonts(layer.lines, scripts)
        return [line for line in layer.lines if mostly_mapped(line) and (foreign_to(line.text, scripts) or unlettered_in(line, fonts))]

    def _disagreement(self, layer: TextLayer, read_sample: ReadSample, *, exclude: list[LayerLine]) -> tuple[str, set[str]]:
        """Which check passed, or why the layer is false (``the layer says ...``) and the fonts whose sampled line the
        ink contradicts. A line with no ink to read (``None``: a font this machine cannot draw) is not judged."""
        skipped = {id(line) for line in exclude}
        lines = [line for line in layer.lines if id(line) not in skipped]
        sample = hidden_sample(lines) if layer.hidden else font_sample(lines, self.verified_fonts)
        if not sample:
            return ("verified_fonts" if any(sampleable(line) for line in lines) else "nothing_to_sample"), set()
        judged, wrong, why = 0, set(), ""
        for line, read in zip(sample, read_sample(sample), strict=True):
            if read is None:
                continue
            judged += 1
            if not read_agrees(line.text, read, self.scripts):
                wrong.add(line.font if not mixed_script(line.text, self.scripts) else line.text)
                why = why or f"the layer says {line.text!r} where the page reads otherwise (agreement {agreement(read, line.text):.2f})"
        if wrong:
            return why, wrong
        if not layer.hidden:
            self.verified_fonts.update(line.font for line in sample)
        return ("recognized_sample" if judged else "not_drawn"), set()

    def _read_regions(
        self, page: PageImage, regions: list[Box], read_region: ReadRegion, recognize: Recognize, *, line_height: float
    ) -> list[Line]:
        """The OCR lines of ``regions`` of ``page`` (the layer painted out), in page pixels; each distinct region read once."""
        import numpy as np

        crops = {box: page.image.crop(box) for box in regions}
        keys = {box: hashlib.blake2b(crop.tobytes(), digest_size=16).hexdigest() + f"{crop.width}x{crop.height}" for box, crop in crops.items()}
        unread = [box for box in regions if keys[box] not in self._regions]
        one_line = [box for box in unread if box[3] - box[1] <= LINE_REGION_HEIGHT * line_height]
        if one_line:
            read = recognize([np.ascontiguousarray(np.asarray(crops[box])[:, :, ::-1]) for box in one_line])
            for box, (text, score) in zip(one_line, read, strict=True):
                width, height = crops[box].size
                polygon = [[0.0, 0.0], [float(width), 0.0], [float(width), float(height)], [0.0, float(height)]]
                self._regions[keys[box]] = [{"text": text.strip(), "polygon": polygon, "score": round(float(score), 4)}]
        for box in unread:
            if box not in one_line:
                content = read_region(PageImage(page=page.page, image=crops[box], scale=page.scale))
                self._regions[keys[box]] = content.get("lines", [])
        lines: list[Line] = []
        for box in regions:
            for line in self._regions[keys[box]]:
                if line["score"] >= MIN_REGION_SCORE and sum(ch.isalnum() for ch in line["text"]) >= MIN_REGION_CHARS:
                    lines.append(mapped_line(line, functools.partial(offset, box[0], box[1])))
        return lines


def _false_script(foreign: list[LayerLine], confident: ConfidentReads | None) -> str | None:
    """Why a layer whose lines are in a script the recogniser does not read is false: the recogniser reads a probe of
    them (``FOREIGN_PROBE`` of their longest) as text of its own with ``CONFIDENT_READ`` (``None``: it does not, or
    there is no recogniser to ask)."""
    if confident is None:
        return None
    probe = sorted((line for line in foreign if sampleable(line) and dominant_script(line.text)), key=lambda line: -len(line.text))[:FOREIGN_PROBE]
    for line, (text, score) in zip(probe, confident(probe), strict=False):
        if score >= CONFIDENT_READ and sum(ch.isalnum() for ch in text) >= MIN_SAMPLE_CHARS and not explained(text, line.text):
            return f"the layer says {line.text!r} ({dominant_script(line.text)}) where the page reads {text!r} (score {score:.2f})"
    return None


def _over_blank(image: PageImage, layer: TextLayer) -> bool:
    """Whether no line of the layer lies over any ink (a page that draws nothing where its invisible text is)."""
    return not any(has_ink(crop) for line in layer.lines if (crop := line_crop(image, line)) is not None)


def _layer_notes(layer: TextLayer, dropped: list[dict[str, Any]]) -> dict[str, Any]:
    """What raw.json notes of a layer used on a page, either way it was used: the lines left to OCR, the characters
    whose font mapped them, and the second reader where the page was read again."""
    return {
        **({"dropped_lines": dropped} if dropped else {}), **({"font_mapped_chars": layer.font_mapped} if layer.font_mapped else {}),
        **({"read_by": "pdfminer.six"} if layer.reread else {}),
    }


def _rejected(reason: str) -> LayerReading:
    return LayerReading(content=None, source="ocr", raw={"source": "ocr", "reason": reason})


def _as_line(line: LayerLine) -> Line:
    words: list[Word] = [{"text": text, "polygon": [list(point) for point in polygon], "score": 1.0} for text, polygon in line.words]
    return {"text": line.text, "polygon": [list(point) for point in line.polygon], "score": 1.0, "words": words}


def _repeats_layer(line: Line, layer_lines: list[LayerLine]) -> bool:
    """An OCR line mostly inside a layer line's box reads ink the layer already has (a bold stroke past its box)."""
    box = line_bbox(line)
    area = max((box[2] - box[0]) * (box[3] - box[1]), 1e-6)
    return any(overlap_area(box, other.box) / area > 0.5 for other in layer_lines)


def _in_reading_order(layer_lines: list[Line], region_lines: list[Line]) -> list[Line]:
    """The layer's lines in their own order, each region line placed before the first layer line below it."""
    lines = list(layer_lines)
    for line in sorted(region_lines, key=lambda line: line_bbox(line)[1]):
        top = line_bbox(line)[1]
        at = next((i for i, other in enumerate(lines) if line_bbox(other)[1] > top), len(lines))
        lines.insert(at, line)
    return lines
