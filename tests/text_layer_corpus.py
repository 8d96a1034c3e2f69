"""The non-Latin text-layer corpus (``tests/documents/text_layers``): each PDF read through the default settings,
written in every output format, and scored against poppler's ``pdftotext``, an extraction independent of pdfium, of the same pages.

Shared by ``benchmarks/text_layer_corpus.py`` (every file, the table in docs/performance/text-layers.md) and
``tests/ocr/test_text_layer_corpus.py`` (a sample, in CI).

Scoring: word F1 (``core.text_metrics.word_f1``'s bag of words) after the same Unicode normalisation on both sides
(``document.layer_text.normal_text``: NFC, presentation forms and ligatures to their letters), with one change for
scripts written without spaces (Han, Hiragana, Katakana, Thai): each of their letters is a word, so a line that
pdftotext breaks elsewhere than pdfium is not a whole line of misses; Devanagari is scored by cluster (a letter with the
signs drawn on it: pdftotext breaks its words where a vowel sign is drawn before its consonant); a zero-width
non-joiner (U+200C) joins the parts of a Persian word, as pdftotext writes them; Arabic harakat and Hebrew points are
not scored (``_POINTS``), and a run of alefs and lams is scored in any order (``_ALEF_LAM``: pdftotext writes Word's
lam-alef ligature reversed).
"""

from __future__ import annotations

import io
import re
import unicodedata
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "documents" / "text_layers"
#: The model ``ocr-platform ocr`` is run with in the corpus (the platform's default route).
CORPUS_MODEL = "pp-ocrv6"
#: Scripts whose words are not separated by spaces: scored letter by letter.
UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "THAI")
#: Scripts scored by cluster (a letter with the signs drawn on it): pdftotext breaks a Devanagari word where a vowel
#: sign is drawn before its consonant (``हि न्दी`` for ``हिन्दी``, ``सा धन`` for ``साधन``), so its words cannot be compared.
CLUSTERED = ("DEVANAGARI",)
#: Arabic harakat and Hebrew points: pdftotext sets a mark typed apart from its letter (``حتماً``'s fathatan in
#: XeLaTeX's Persian) beside the word, so words are scored without them.
_POINTS = re.compile(r"[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]")
#: A run of alefs and lams, scored in any order: pdftotext writes the lam-alef ligature of Word's Arabic fonts as its
#: letters in visual order (``اإلنتاجية`` for ``الإنتاجية``), which the platform puts in the order they are typed.
_ALEF_LAM = re.compile(r"[\u0622\u0623\u0625\u0627\u0671\u0644]{2,}")
_TOKEN = re.compile(r"\w[\w\u0300-\u036f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0903\u093a-\u094f\u0e31-\u0e3a\u0e47-\u0e4e]*")


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(UNSPACED + CLUSTERED)


def tokens(text: str) -> Counter[str]:
    """The words of ``text`` for scoring: letters and digits with their combining marks, lower-cased; a Han, kana
    or Thai letter is a word of its own, and so is a Devanagari letter with its signs.

    >>> tokens("हि न्दी के सा धन") == tokens("हिन्दी के साधन"), tokens("اإلنتاجية") == tokens("الإنتاجية")
    (True, True)
    """
    from ocr_platform.document.layer_text import normal_text

    pieces: list[str] = []
    plain = _ALEF_LAM.sub(lambda run: "".join(sorted(run.group())), _POINTS.sub("", normal_text(text)))
    for word in _TOKEN.findall(plain.replace("\u200c", "").lower()):
        run = ""
        for char in word:
            if _unspaced(char):
                if run:
                    pieces.append(run)
                    run = ""
                pieces.append(char)
            elif unicodedata.category(char).startswith("M") and not run and pieces:
                if unicodedata.name(pieces[-1][0], "").startswith(CLUSTERED):
                    pieces[-1] += char  # a Devanagari sign stays with its letter
                # else a mark of a letter scored alone (a Thai vowel sign): counted with nothing
            else:
                run += char
        if run:
            pieces.append(run)
    return Counter(pieces)


def corpus_f1(reference: str, hypothesis: str) -> float:
    """Word F1 of ``hypothesis`` against ``reference`` (``tokens``); 1.0 when both have none."""
    ref, hyp = tokens(reference), tokens(hypothesis)
    if not ref and not hyp:
        return 1.0
    return 2 * sum((ref & hyp).values()) / (sum(ref.values()) + sum(hyp.values()))


def corpus_script(text: str) -> str:
    """The script a corpus file is filed under in the tables: its most common letters outside Latin, Han with kana as
    Japanese, Arabic script with Persian's own letters (``پ چ ژ گ``) as Persian; Latin when it has no others."""
    from ocr_platform.document.layer_text import normal_text
    from ocr_platform.engines.scripts import letter_script

    text = normal_text(text)
    counts = Counter(script for ch in text if (script := letter_script(ch)) not in (None, "Latin"))
    if not counts:
        return "Latin"
    if counts["Hiragana"] + counts["Katakana"] >= 5:
        return "Japanese"
    script = counts.most_common(1)[0][0]
    if script == "Arabic" and any(ch in text for ch in "پچژگ"):
        return "Persian"
    return {"Han": "Chinese", "Hangul": "Korean (Hangul)"}.get(script, script)


def reference_pages(path: Path) -> list[str]:
    """Each page's text as poppler's ``pdftotext`` extracts it (UTF-8, right-to-left lines in logical order)."""
    import subprocess

    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True, timeout=120).stdout
    return text.decode("utf-8", errors="replace").split("\f")


def write_every_format(path: Path, result: Any, workdir: Path) -> None:
    """Every output format of ``result``: the text formats rendered (hOCR and ALTO parsed as XML), the searchable PDF
    written and read back. Raises whatever a writer raises."""
    from ocr_platform.outputs.formats import FORMATS, render
    from ocr_platform.outputs.searchable_pdf import write_searchable_pdf

    for name in FORMATS:
        body = render(name, result)
        if name in ("hocr", "alto"):
            ET.parse(io.BytesIO(body))
    target = write_searchable_pdf(path, result, workdir / f"{path.stem}-searchable.pdf")
    import pypdfium2 as pdfium

    pdfium.PdfDocument(str(target)).close()


def read_and_score(path: Path, engine: Any, *, workdir: Path | None = None) -> dict[str, Any]:
    """Read ``path`` as ``ocr-platform ocr --model pp-ocrv6`` does, write every format, score each page: a row."""
    import tempfile

    from ocr_platform.core.results import page_text
    from ocr_platform.engines.reading import ocr_document

    result, raw = ocr_document(path, job_id=f"corpus-{uuid.uuid4().hex[:8]}", model=CORPUS_MODEL, engine=engine)
    with tempfile.TemporaryDirectory() as tmp:
        write_every_format(path, result, workdir or Path(tmp))
    references = reference_pages(path)
    pages = []
    for page, raw_page in zip(result["pages"], raw.get("pages", [{}] * len(result["pages"])), strict=False):
        reference = references[page["page"] - 1] if page["page"] - 1 < len(references) else ""
        layer = raw_page.get("text_layer", {}) if isinstance(raw_page, dict) else {}
        pages.append({
            "page": page["page"], "f1": round(corpus_f1(reference, page_text(page)), 3), "source": page.get("text_source", "ocr"),
            "script": page.get("script"), "reason": layer.get("reason") or layer.get("layer_check"),
        })
    f1s = [page["f1"] for page in pages]
    return {
        "file": path.name, "script": corpus_script("".join(references)), "pages": len(pages), "f1": round(sum(f1s) / len(f1s), 3) if f1s else None,
        "min_f1": min(f1s, default=None), "sources": dict(Counter(page["source"] for page in pages)),
        "scripts": sorted({page["script"] for page in pages if page["script"]}),
        "warnings": [warning["code"] for warning in result.get("warnings", [])], "detail": pages,
    }
