"""``language: auto`` against the default ``en`` on the ``pp-ocrv5`` route, per script: word F1, seconds a page, the
pages' ``script`` and the warnings, for each public PDF of tests/documents/public/ read as it is (born-digital, its
text layer) and rendered at 200 dpi to PNG (a scan: no text layer).

Reference text: each page's text layer (pypdfium2), as in tests/ocr/test_text_layer_scripts.py. The engine is
loaded once; each document is read once per language after a warm-up read (``--repeat`` keeps the fastest).
Which recognisers ``auto`` could pick among is printed: on a machine without the single-script PP-OCRv5
recognisers (only the multilingual one ships in a package) a Hangul or Arabic scan is in a script no installed
recogniser reads.

    .venv/bin/python benchmarks/scripts.py [--repeat 2]

Not part of the test suite; docs/using-it/languages.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

PUBLIC = ROOT / "tests" / "documents" / "public"
#: (file, pages, the pages' script).
DOCUMENTS = (
    ("pypdf-issue-604-cover.pdf", "1", "Latin"),
    ("SF424_page2.pdf", "1", "Latin"),
    ("hangul-jamo.pdf", "1", "Hangul"),
    ("arabic-cid-truetype.pdf", "1", "Arabic"),
    ("persian-pure-words.pdf", "2-3", "Arabic (Persian)"),
)
LANGUAGES = ("en", "auto")


def layer_texts(path: Path, pages: list[int]) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return [str(pdf[n - 1].get_textpage().get_text_range()) for n in pages]
    finally:
        pdf.close()


def render(path: Path, pages: list[int], workdir: Path) -> list[Path]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        out = []
        for n in pages:
            png = workdir / f"{path.stem}-{n}.png"
            pdf[n - 1].render(scale=200 / 72).to_pil().convert("RGB").save(png)
            out.append(png)
        return out
    finally:
        pdf.close()


def page_numbers(spec: str) -> list[int]:
    first, _, last = spec.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="reads per document and language; the fastest is kept")
    args = parser.parse_args()

    from ocr_platform.core.text_metrics import word_f1
    from ocr_platform.engines.languages import RECOGNISERS
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings

    engine = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
    installed = [name for name in RECOGNISERS if engine.has_model(name)]
    print(f"machine: {platform.machine()}, {platform.processor() or platform.platform()}; recognisers here: {', '.join(installed)}")
    print("\n| document | script | read as | language | word F1 | s/page | script check s/page | pages' script | warnings |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, pages, script in DOCUMENTS:
            numbers = page_numbers(pages)
            references = layer_texts(PUBLIC / name, numbers)
            scans = render(PUBLIC / name, numbers, Path(tmp))
            inputs = [("PDF (text layer)", [(PUBLIC / name, pages)]), ("scan (PNG)", [(png, None) for png in scans])]
            for form, files in inputs:
                for language in LANGUAGES:
                    engine.predict(files[0][0], language=language, pages=files[0][1])  # warm-up: builds what it needs
                    best, out_pages, warnings, check = float("inf"), [], [], 0.0
                    for _ in range(args.repeat):
                        started, read, found, probing = time.perf_counter(), [], [], 0.0
                        for path, selection in files:
                            output = engine.predict(path, language=language, pages=selection)
                            read += output.pages
                            found += [warning["ran"] for warning in output.warnings]
                            probing += output.timings.get("script_check", 0.0)
                        seconds = time.perf_counter() - started
                        if seconds < best:
                            best, out_pages, warnings, check = seconds, read, found, probing
                    texts = ["\n".join(line["text"] for line in page["lines"]) for page in out_pages]
                    f1 = sum(word_f1(ref, text) for ref, text in zip(references, texts, strict=True)) / len(references)
                    scripts = sorted({str(page.get("script")) for page in out_pages})
                    print(
                        f"| {name} | {script} | {form} | {language} | {f1:.3f} | {best / len(numbers):.2f} | "
                        f"{check / len(numbers):.2f} | {', '.join(scripts)} | {', '.join(f'language_mismatch ({w})' for w in warnings) or '-'} |"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
