"""Which script a scanned page is in, told by the recognisers themselves: what ``language: auto`` reads a page
with, and how a page in a script the job's language does not read is noticed.

No package on PyPI ships a script or language classifier for page images as files (PaddleClas' PULC
language classifier and PP-OCRv5's single-script recognisers are hub downloads only), so the recognisers judge:
a recogniser reads the lines of its own script with high confidence and those of another script as garbage
with a low one. Measured with PP-OCRv5's multilingual recogniser (``PP-OCRv5_mobile_rec``) on pages rendered
at 200 dpi from public PDFs (docs/using-it/languages.md): the median line score of Latin and Chinese pages is
0.985-0.998, of Hangul, Arabic and Persian pages 0.50-0.61. The margin is narrower at the edges: a Russian page
(rendered here, DejaVu Serif) scores 0.76, as the multilingual character set holds Latin and Greek look-alikes of
many Cyrillic letters, and a Latin form page degraded to a blurred, noisy 100-dpi JPEG 0.82. ``SCRIPT_SCORE`` lies
between.

Per page (``ScriptCheck.check``), after the job's recogniser read it (for ``auto``, the multilingual one):

1. A page whose lines' median score is at least ``SCRIPT_SCORE`` is in a script that recogniser reads: its
   ``script`` is the one most of the letters it read are in. Nothing more runs (no cost on such a page).
2. Otherwise a sample of the page's lines (``SAMPLE_LINES``, its widest) is recognised by every other
   recogniser this machine has without a model hub (``candidates``: on AWS the processor image bakes all of
   them), and the best median score wins if it reaches ``SCRIPT_SCORE``: with ``auto`` the page is read again
   with that recogniser; with a named language the page keeps the job's reading and the job gets a
   ``language_mismatch`` warning naming the script the winner read. When no recogniser reads the sample well
   the page's script is ``Unknown``, and the warning says that no installed recogniser reads it.

>>> median_score([{"text": "Invoice", "score": 0.99}, {"text": "Total", "score": 0.97}, {"text": ".", "score": 0.1}])
0.98
>>> median_score([{"text": "a", "score": 0.4}]) is None  # too little text to judge
True
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ocr_platform.core.results import Line, ResultWarning
from ocr_platform.engines.conversion import PageContent
from ocr_platform.engines.regions import line_bbox
from ocr_platform.engines.scripts import (
    LANGUAGE_MISMATCH,
    RIGHT_TO_LEFT_SCRIPTS,
    covered_scripts,
    dominant_script,
    language_mismatch_warning,
    script_language,
)

#: A page whose lines' median recognition score is below this is in a script its recogniser does not read.
SCRIPT_SCORE = 0.8
#: Lines of a doubtful page recognised by each other recogniser (its widest lines).
SAMPLE_LINES = 6
#: Lines with at least this many letters or digits count for a page's score (a lone mark says nothing).
MIN_LINE_CHARS = 2
#: Fewer counted lines than this: the page has too little text to judge, and its reading stands.
MIN_LINES = 2
#: ``script`` of a page that no installed recogniser reads well.
UNKNOWN_SCRIPT = "Unknown"

#: Recognises line crops (BGR arrays): ``(text, score)`` per crop.
Recognize = Callable[[Sequence[Any]], list[tuple[str, float]]]


def median_score(lines: Sequence[Line]) -> float | None:
    """The median score of the lines with some text (``None`` when fewer than ``MIN_LINES`` have)."""
    scores = [float(line["score"]) for line in lines if sum(ch.isalnum() for ch in line["text"]) >= MIN_LINE_CHARS]
    return round(statistics.median(scores), 4) if len(scores) >= MIN_LINES else None


@dataclass
class Verdict:
    """What ``ScriptCheck.check`` found on one page.

    Attributes:
        recognizer: the recognition model whose reading the page keeps (``auto``: the one to read it with).
        script: the page's script (``UNKNOWN_SCRIPT`` when no recogniser reads it well; ``None`` without text).
        raw: what was measured, for raw.json (scores per recogniser, seconds).
    """

    recognizer: str
    script: str | None
    raw: dict[str, Any] = field(default_factory=dict)

    def page_content(self, lines: list[Line]) -> PageContent:
        """The result page's ``lines`` (in right-to-left reading order in a right-to-left script) with its ``script``
        and, where the script names one, ``language``."""
        content: PageContent = {"lines": right_to_left_rows(lines) if self.script in RIGHT_TO_LEFT_SCRIPTS else lines}
        if self.script is not None:
            content["script"] = self.script
            language = script_language(self.script)
            if language:
                content["language"] = language
        return content


@dataclass
class ScriptCheck:
    """The per-document state of the script check (see the module docstring).

    Args:
        language: the job's language (``auto`` picks the recogniser per page).
        candidates: the recognition models this machine has without a hub, each with what recognises crops with it
            (built on first use).

    Attributes:
        mismatched: scanned pages whose script the job's recogniser does not read, by the script found (``auto``: the
            pages no recogniser reads, under ``UNKNOWN_SCRIPT``).
        seconds: time spent probing other recognisers.
    """

    language: str
    candidates: dict[str, Callable[[], Recognize]]
    mismatched: dict[str, list[int]] = field(default_factory=dict)
    seconds: float = 0.0
    _recognizers: dict[str, Recognize] = field(default_factory=dict)

    def check(self, page: int, image_bgr: Any, lines: Sequence[Line], recognizer: str) -> Verdict:
        """The verdict on ``page`` (an upright BGR image) whose ``lines`` ``recognizer`` read."""
        score = median_score(lines)
        if score is None or score >= SCRIPT_SCORE:
            script = dominant_script(*(line["text"] for line in lines))
            return Verdict(recognizer, script, {"recognizer": recognizer, "median_score": score})
        started = time.perf_counter()
        crops = _sample(image_bgr, lines)
        scores: dict[str, float] = {recognizer: score}
        scripts: dict[str, str | None] = {}
        for name in self.candidates:
            if name == recognizer or not crops:
                continue
            read = self._recognizer(name)(crops)
            scores[name] = median_score([{"text": text, "score": value, "polygon": []} for text, value in read]) or 0.0
            scripts[name] = dominant_script(*(text for text, _ in read))
        best = max(scores, key=lambda name: scores[name])
        elapsed = time.perf_counter() - started
        self.seconds += elapsed
        raw = {"recognizer": recognizer, "median_score": score, "probes": scores, "seconds": round(elapsed, 3)}
        found = best != recognizer and scores[best] >= SCRIPT_SCORE
        script = (scripts[best] if found else None) or UNKNOWN_SCRIPT
        if self.language != "auto":
            if script not in covered_scripts(recognizer):  # another recogniser only reads the job's script better
                self.mismatched.setdefault(script, []).append(page)
            return Verdict(recognizer, script, raw)
        if not found:
            self.mismatched.setdefault(UNKNOWN_SCRIPT, []).append(page)
        return Verdict(best if found else recognizer, script, {**raw, "read_with": best if found else recognizer})

    def _recognizer(self, name: str) -> Recognize:
        if name not in self._recognizers:
            self._recognizers[name] = self.candidates[name]()
        return self._recognizers[name]

    def warnings(self, layer_pages: dict[str, list[int]], *, scanned: set[int] | None = None) -> list[ResultWarning]:
        """A ``language_mismatch`` warning per script found on pages the job's recogniser does not read: pages read from
        a text layer (``layer_pages``, from ``TextLayerChoice.mismatched``) and the ``scanned`` pages (read by OCR alone;
        ``None``: all) among ``mismatched``. A region that OCR read beside a page's text layer warns of nothing: the
        page's text and script are the layer's."""
        merged: dict[str, set[int]] = {}
        found_here = {script: [page for page in pages if scanned is None or page in scanned] for script, pages in self.mismatched.items()}
        for found in ({} if self.language == "auto" else layer_pages, found_here):
            for script, pages in found.items():
                if pages:
                    merged.setdefault(script, set()).update(pages)
        return [unread_script_warning(language=self.language, script=script, pages=sorted(pages)) for script, pages in merged.items()]


def unread_script_warning(*, language: str, script: str, pages: list[int]) -> ResultWarning:
    """The ``language_mismatch`` warning for scanned ``pages`` that the recogniser for ``language`` reads poorly.

    >>> unread_script_warning(language="en", script="Unknown", pages=[3])["message"].split(";")[0]
    "Page 3 reads poorly with the job's language 'en' and with every recogniser installed here"
    >>> unread_script_warning(language="en", script="Hangul", pages=[1, 2])["message"].split(";")[0]
    "Pages 1, 2 are in Hangul script, which the job's language 'en' does not read"
    """
    if script != UNKNOWN_SCRIPT:
        return language_mismatch_warning(language=language, script=script, pages=pages)
    where = f"Page {pages[0]}" if len(pages) == 1 else f"Pages {', '.join(map(str, pages))}"
    read_with = "every recogniser installed here" if language == "auto" else f"the job's language {language!r} and with every recogniser installed here"
    return {
        "code": LANGUAGE_MISMATCH,
        "requested": language,
        "ran": UNKNOWN_SCRIPT,
        "reason": f"the lines' median recognition score is below {SCRIPT_SCORE} with every installed recogniser",
        "message": (
            f"{where} reads poorly with {read_with}; "
            "it may be in a script none of them reads (the processor image bakes every PP-OCRv5 recogniser; "
            "elsewhere seed them with ocr-platform models seed), or the image is too poor to read."
        ),
    }


def right_to_left_rows(lines: list[Line]) -> list[Line]:
    """``lines`` in the order a right-to-left page is read: the detector's rows top to bottom (a line whose middle lies
    within the height of the line before it is on the same row), each row from its rightmost line to its leftmost.

    >>> def line(text, x0, y0):
    ...     return {"text": text, "score": 1.0, "polygon": [[x0, y0], [x0 + 80, y0], [x0 + 80, y0 + 20], [x0, y0 + 20]]}
    >>> [item["text"] for item in right_to_left_rows([line("c", 0, 0), line("b", 100, 2), line("a", 200, 1), line("d", 200, 40)])]
    ['a', 'b', 'c', 'd']
    """
    rows: list[list[Line]] = []
    for line in lines:
        x0, y0, x1, y1 = line_bbox(line)
        if rows:
            _, top, _, bottom = line_bbox(rows[-1][-1])
            if top <= (y0 + y1) / 2 <= bottom:
                rows[-1].append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda item: -line_bbox(item)[2])]


def _sample(image_bgr: Any, lines: Sequence[Line]) -> list[Any]:
    """Crops of the ``SAMPLE_LINES`` widest lines that run across the page (BGR arrays)."""
    import numpy as np

    height, width = image_bgr.shape[:2]
    boxes = [line_bbox(line) for line in lines]
    across = [box for box in boxes if box[2] - box[0] > box[3] - box[1] > 2]
    crops = []
    for x0, y0, x1, y1 in sorted(across, key=lambda box: box[0] - box[2])[:SAMPLE_LINES]:
        pad = 0.1 * (y1 - y0)
        crop = image_bgr[max(0, int(y0 - pad)) : min(height, int(y1 + pad + 1)), max(0, int(x0 - pad)) : min(width, int(x1 + pad + 1))]
        crops.append(np.ascontiguousarray(crop))
    return crops
