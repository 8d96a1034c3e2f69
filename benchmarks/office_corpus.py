"""Office and HTML corpora through the local reading path: how many files read, read by a fallback, or failed (by code).

Each file under the given folders (``.docx``/``.docm``, ``.pptx``/``.pptm``, ``.xlsx``/``.xlsm``, ``.html``/``.htm``)
goes through ``ocr_platform.document.intake.read_native``, the code every CPU route runs before its engine sees
a picture: the file is told from its bytes, its ZIP checked, and every unit read by PaddleOCR's converter (or by
the fallback reader, which adds a ``converter_fallback`` warning). Embedded pictures are not OCR'd here (that is
``benchmarks/office_and_html.py``'s measure); ``--force-fallback`` makes the converter fail on every Office file,
to measure the fallback readers alone. A failure is its ``JobError`` code; any other exception would be a
traceback a user sees, and is counted as ``traceback``.

    .venv/bin/python benchmarks/office_corpus.py /tmp/sdists/docx2python-3.5.0/tests/resources /tmp/sdists/python_pptx-1.0.2

Public corpora: ``pip download --no-deps --no-binary :all: docx2python==3.5.0 python-pptx==1.0.2 openpyxl==3.1.5
readme_renderer==44.0`` and unpack them. ``--list`` prints each file's outcome. Not part of the test suite;
docs/using-it/office-and-html.md reports its table with the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]
os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")

KINDS = {".docx": "DOCX", ".docm": "DOCX", ".pptx": "PPTX", ".pptm": "PPTX", ".xlsx": "XLSX", ".xlsm": "XLSX",
         ".html": "HTML", ".htm": "HTML"}


def outcome(path: Path) -> tuple[str, float]:
    """``read``, ``fallback`` or the failure's code, and the seconds the read took."""
    from ocr_platform.core.errors import JobError
    from ocr_platform.document.intake import IntakeLimits, read_native

    started = time.perf_counter()
    try:
        native, _units = read_native(path, pages=None, limits=IntakeLimits())
    except JobError as err:
        return str(err.code.value if hasattr(err.code, "value") else err.code), time.perf_counter() - started
    except Exception as err:  # noqa: BLE001 - what a user would see as a traceback
        return f"traceback ({type(err).__name__})", time.perf_counter() - started
    fallback = any(w["code"] == "converter_fallback" for w in native.notes.warnings)
    return ("fallback" if fallback else "read"), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--list", action="store_true", help="print each file's outcome")
    parser.add_argument("--force-fallback", action="store_true", help="make PaddleOCR's converter fail on every Office file, "
                        "to measure the fallback readers alone")
    args = parser.parse_args()
    if args.force_fallback:
        from ocr_platform.document import office

        def failing(named: Path, kind: str) -> None:
            raise RuntimeError("converter skipped (--force-fallback)")

        office._convert = failing  # type: ignore[assignment]
    from paddleocr import doc2md_convert  # noqa: F401 - imported once before the clock runs, as a warm processor has it

    files = sorted(p for folder in args.folders for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in KINDS)
    results: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for path in files:
        found, seconds = outcome(path)
        results[KINDS[path.suffix.lower()]].append((found, seconds))
        if args.list:
            print(f"{found:28} {seconds:7.2f}s  {path}")
    print("| Kind | Files | Read | Read with fallback | Failed (by code) | Median s | Max s |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for kind in ("DOCX", "PPTX", "XLSX", "HTML"):
        rows = results.get(kind)
        if not rows:
            continue
        counts = Counter(found for found, _ in rows)
        failed = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()) if code not in ("read", "fallback")) or "none"
        median = statistics.median(seconds for _, seconds in rows)
        slowest = max(seconds for _, seconds in rows)
        print(f"| {kind} | {len(rows)} | {counts['read'] + counts['fallback']} | {counts['fallback']} | {failed} | {median:.3f} | {slowest:.2f} |")


if __name__ == "__main__":
    main()
