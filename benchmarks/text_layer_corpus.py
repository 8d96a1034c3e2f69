"""Born-digital PDFs in non-Latin scripts read through the default settings, scored against poppler's pdftotext.

Every PDF under ``tests/documents/text_layers`` (public files; ``SOURCES.md`` there names each one's origin and
licence) is read as ``ocr-platform ocr FILE --model pp-ocrv6`` reads it (``ocr_document`` with the default
language and options, so ``text_layer: auto``), then written in every output format (json, md, hocr, alto,
textract and the searchable PDF), so a text layer that a writer cannot encode fails here. Each page's text is
scored by word F1 (``tests.text_layer_corpus.corpus_f1``) against poppler's ``pdftotext`` extraction of the same
page, independent of pdfium (``scripts/setup.sh`` installs Debian's poppler-utils).

    .venv/bin/python benchmarks/text_layer_corpus.py [--only NAME ...] [--json ROWS] [--markdown FROM_ROWS]

``--markdown ROWS`` prints the tables of docs/performance/text-layers.md (one per script) from a run's ``--json``
rows, with ``NOTES`` saying why each file under 0.95 is.

Not part of the test suite (``tests/ocr/test_text_layer_corpus.py`` runs a sample); the figures are in
docs/performance/text-layers.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

CORPUS = ROOT / "tests" / "documents" / "text_layers"
#: Word F1 every file reads at, or ``NOTES`` says why it cannot.
TARGET = 0.95
#: The script a file is filed under where its reference cannot say (``corpus_script`` reads pdftotext's text).
SCRIPT_OVERRIDES = {
    "pdfjs-xiaobiaosong.pdf": "Chinese",  # pdftotext's text is GBK read as Latin-1
    "pdfjs-bug1175962.pdf": "Old Hungarian",
    "pdfjs-issue5874.pdf": "Urdu",
    "pdfjs-thuluthfeatures.pdf": "Greek and Cyrillic (a font's test sheet)",
    "pdfjs-issue7426.pdf": "Bhaiksuki",
}
#: Why a file reads under ``TARGET``: its layer is itself wrong, or the reference is.
NOTES = {
    "pdfium-bug-921.pdf": (
        "layer without a character map (pdfium guesses 100 % of it); the default `en` recogniser reads Cyrillic as look-alikes "
        "too poor to verify it, so the page is OCR'd (`language_mismatch`: `--lang ru` reads it)"
    ),
    "pdfjs-complex-ttf-font.pdf": (
        "layer itself wrong: 97 % of its characters have no Unicode mapping and pdfium's guesses read 0.62 against pdftotext; "
        "OCR'd, the Cyrillic, Greek and Myanmar lines need their own languages"
    ),
    "pdfjs-issue20232.pdf": (
        "layer itself wrong: its font maps the Cyrillic glyphs to Hangul code points (`킘킽킲.` for `Перв.`); refused and OCR'd with "
        "`en` (`language_mismatch`)"
    ),
    "pdfjs-issue5874.pdf": "layer itself wrong: 65 % unmapped, pdfium's reading is CJK and symbol garbage over Urdu ink; OCR'd",
    "pdfjs-thuluthfeatures.pdf": "layer itself wrong: 95 % unmapped (a font test sheet of Thuluth glyphs); OCR'd",
    "pdfjs-issue2884-reduced.pdf": "layer partly wrong: 17 % unmapped and those lines read otherwise; the rest is too little of the ink",
    "pdfjs-javauninstall-7r.pdf": (
        "layer without a character map (100 % guessed, right here); the guessed lines' ink does not read the same with the "
        "default recogniser, so the page is OCR'd"
    ),
    "pdfjs-issue16538.pdf": "vertical Japanese: pdfium's layer covers none of the page's ink the way it is drawn; OCR'd",
    "pdfminer-jo.pdf": "vertical Japanese: pdfium reads 247 of its 865 characters (pdftotext all); the layer is used and the rest is not found as missing ink",
    "pdfjs-xiaobiaosong.pdf": "the reference is wrong: pdftotext decodes the GBK text as Latin-1 mojibake; the layer (pdfium) is the true text",
    "pdfjs-bug1175962.pdf": (
        "Old Hungarian (beyond the BMP; it crashed every writer before): the one sampled line's ink does not read as the layer "
        "with a recogniser that does not read the script; OCR'd"
    ),
    "fpdf2-shaping-hindi.pdf": "the reference is wrong: pdftotext splits the shaped conjuncts (`हि न्दी`, `सा धन`); the layer reads `हिन्दी के साधन`",
    "fpdf2-text-mixed-text-shaping.pdf": "the same Hindi line as `fpdf2-shaping-hindi.pdf`, split by pdftotext",
    "fpdf2-bidi-arabic-lorem-ipsum.pdf": "page 1 mixes Arabic and Latin in one font; see the per-page detail",
    "fpdf2-tutorial-unicode.pdf": (
        "a line per language; the Korean and Thai lines' sampled ink reads otherwise with the `en` recogniser, so they "
        "are OCR'd (raw.json `dropped_lines`) and read poorly"
    ),
    "pdfjs-issue13211.pdf": (
        "Thai lines with more than a quarter of their characters unmapped are OCR'd with `en`, which does not read Thai "
        "(`language_mismatch`; `--lang th` reads them)"
    ),
    "pdfplumber-issue-842-example.pdf": (
        "the layer covers 67 % of the page's text ink; the region it lacks is OCR'd, and its Chinese words are missing "
        "from what OCR reads there"
    ),
    "pysamples-015-arabic-habibi-rotated.pdf": "rotated Arabic: pdftotext writes the word in visual order (`يبيبَح`); the layer also has unmapped glyphs",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="file names to read (default: all)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path, help="write each file's row here")
    parser.add_argument("--markdown", type=Path, help="print the docs tables from these rows (a run's --json) and stop")
    args = parser.parse_args()
    if args.markdown:
        print(tables(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return
    os.environ.setdefault("OCR_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ocr-benchmark-models"))

    from ocr_platform.engines import get_engine
    from tests.text_layer_corpus import CORPUS_MODEL, read_and_score

    engine = get_engine(CORPUS_MODEL)
    files = sorted(p for p in args.corpus.glob("*.pdf") if not args.only or p.name in args.only)
    rows = []
    for path in files:
        started = time.perf_counter()
        try:
            row = read_and_score(path, engine)
        except Exception as err:  # noqa: BLE001 - a crash is a row of the table, with its traceback
            traceback.print_exc()
            row = {"file": path.name, "error": f"{type(err).__name__}: {err}"}
        row["seconds"] = round(time.perf_counter() - started, 3)
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")


def tables(rows: list[dict]) -> str:
    """One markdown table per script: each file's pages, word F1 (mean, lowest page), where its text came from."""
    out = []
    for row in rows:
        row["script"] = SCRIPT_OVERRIDES.get(row["file"], row.get("script", "?"))
    for script in sorted({row["script"] for row in rows}):
        group = [row for row in rows if row.get("script", "?") == script]
        passed = sum(1 for row in group if (row.get("min_f1") or 0) >= TARGET)
        out += [f"**{script}** ({passed} of {len(group)} files at {TARGET} or more)", "",
                "| file | pages | word F1 (mean / lowest page) | text from | s | why under 0.95 |", "| --- | --- | --- | --- | --- | --- |"]
        for row in group:
            if "error" in row:
                out.append(f"| `{row['file']}` | | crashed: {row['error']} | | | |")
                continue
            sources = ", ".join(f"{name} {count}" for name, count in sorted(row["sources"].items()))
            note = NOTES.get(row["file"], "") if row["min_f1"] < TARGET else ""
            out.append(f"| `{row['file']}` | {row['pages']} | {row['f1']:.3f} / {row['min_f1']:.3f} | {sources} | {row['seconds']:.2f} | {note} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
