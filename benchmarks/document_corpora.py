"""Two public corpora of every document type, read by the platform and by markitdown in the same run.

Each file of unstructured's ``example-docs`` and of markitdown's ``tests/test_files`` goes through
``ocr_platform.engines.reading.ocr_document`` (what the processor and ``ocr-platform ocr`` run) with the real
PP-OCRv5 engine (loaded once beforehand), and through ``markitdown.MarkItDown().convert``. Per type (the file's
extension) the table gives: files, files read (COMPLETED, with text or with a warning that says why not; in brackets
those whose text holds a word: markitdown reads a picture without an LLM as its metadata only),
refusals by code (a ``JobError``; anything else is counted as ``traceback``), seconds per file (median), and
beside them markitdown's files read, failures (by exception) and seconds per file. Two fidelity measures, where
the corpora have references:

- **word recall**: the share of the words of unstructured's own expected output for the file
  (``test_unstructured_ingest/expected-structured-output/**/<file>.json``, its elements' ``text``) and of markitdown's
  expected Markdown (``tests/test_files/expected_outputs/<file>.md``) found in each tool's text (words lowercased,
  counted with repetition);
- **vectors**: markitdown's own ``must_include`` strings (``tests/_test_vectors.py``) found in each tool's Markdown,
  and its ``must_not_include`` strings absent, compared without Markdown markers (``#``, ``*``, ``|``, ``\\``).

A PDF is read up to ``--max-pages`` pages by the platform (its text layer where it has one, else OCR), as the
corpora hold 400- and 619-page files; markitdown reads all of them (text layer only). The corpora are brought
from their repositories (docs/performance/document-corpora.md says which commits and how):

    .venv/bin/pip install -e '.[bench]'      # markitdown, for this benchmark only
    .venv/bin/python benchmarks/document_corpora.py /tmp/corpora --list > /tmp/corpora.txt

Not part of the test suite; docs/performance/document-corpora.md reports its table with the machine it ran on.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import platform
import re
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]
os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")

UNSTRUCTURED_DOCS = Path("unstructured/example-docs")
UNSTRUCTURED_EXPECTED = Path("unstructured/test_unstructured_ingest/expected-structured-output")
MARKITDOWN_TESTS = Path("markitdown/packages/markitdown/tests")
_WORD = re.compile(r"\w+")
_MARKERS = re.compile(r"[#*_|\\`>]+")


@dataclass
class Outcome:
    """One tool's read of one file."""

    status: str  # "read" or the refusal's code / the exception's class
    seconds: float
    text: str = ""
    warnings: list[str] = field(default_factory=list)


def words(text: str) -> collections.Counter[str]:
    return collections.Counter(w.lower() for w in _WORD.findall(text))


def recall(reference: str, text: str) -> float:
    """The share of ``reference``'s words found in ``text``, counted with repetition."""
    wanted = words(reference)
    found = words(text)
    total = sum(wanted.values())
    return sum(min(count, found[word]) for word, count in wanted.items()) / total if total else 1.0


def _plain(text: str) -> str:
    return " ".join(_MARKERS.sub(" ", text).lower().split())


def references(corpora: Path) -> dict[str, str]:
    """Expected text by file name: unstructured's expected outputs (the first found per name), markitdown's."""
    found: dict[str, str] = {}
    for path in sorted((corpora / UNSTRUCTURED_EXPECTED).rglob("*.json")):
        name = path.name.removesuffix(".json")
        if name in found:
            continue
        try:
            elements = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(elements, list):
            found[name] = "\n".join(str(e.get("text", "")) for e in elements if isinstance(e, dict))
    for path in sorted((corpora / MARKITDOWN_TESTS / "test_files" / "expected_outputs").glob("*.md")):
        found.setdefault(path.stem + ".pdf", path.read_text(encoding="utf-8"))
    return found


def vectors(corpora: Path) -> dict[str, tuple[list[str], list[str]]]:
    """markitdown's test vectors by file name: (must_include, must_not_include)."""
    source = corpora / MARKITDOWN_TESTS / "_test_vectors.py"
    spec = importlib.util.spec_from_file_location("markitdown_vectors", source)
    if spec is None or spec.loader is None:
        return {}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: dict[str, tuple[list[str], list[str]]] = {}
    for vector in getattr(module, "GENERAL_TEST_VECTORS", []):
        include, exclude = found.setdefault(vector.filename, ([], []))
        include.extend(vector.must_include)
        exclude.extend(vector.must_not_include)
    return found


def corpus_files(corpora: Path) -> list[Path]:
    files = [p for p in (corpora / UNSTRUCTURED_DOCS).rglob("*") if p.is_file()
             if "test_evaluate_files" not in p.parts]
    files += [p for p in (corpora / MARKITDOWN_TESTS / "test_files").glob("*") if p.is_file()]
    return sorted(files)


def kind_of(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    return suffix or "(none)"


def platform_read(path: Path, engine: Any, max_pages: int) -> Outcome:
    from ocr_platform.core.errors import JobError
    from ocr_platform.document.intake import IntakeLimits, file_type, selected_pages
    from ocr_platform.engines.reading import ocr_document
    from ocr_platform.outputs.formats import markdown_document

    started = time.perf_counter()
    try:
        pages = None
        if not file_type(path, IntakeLimits()).native and len(selected_pages(path, pages=None, limits=IntakeLimits())) > max_pages:
            pages = f"1-{max_pages}"
        result, _ = ocr_document(path, job_id="bench", model="pp-ocrv5", engine=engine, pages=pages)
    except JobError as err:
        return Outcome(str(err.code), time.perf_counter() - started)
    except Exception as err:  # noqa: BLE001 - what a user would see as a traceback
        return Outcome(f"traceback ({type(err).__name__})", time.perf_counter() - started)
    return Outcome("read", time.perf_counter() - started, markdown_document(result) + "\n" + result["text"],
                   [w["code"] for w in result["warnings"]])


def markitdown_read(path: Path, converter: Any) -> Outcome:
    started = time.perf_counter()
    try:
        converted = converter.convert(str(path))
    except Exception as err:  # noqa: BLE001 - markitdown raises its own and its libraries' exceptions
        return Outcome(type(err).__name__, time.perf_counter() - started)
    return Outcome("read", time.perf_counter() - started, converted.text_content or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", type=Path, help="the folder holding unstructured/ and markitdown/ (see the docstring)")
    parser.add_argument("--max-pages", type=int, default=3, help="pages of a PDF or multi-page image the platform reads")
    parser.add_argument("--list", action="store_true", help="print each file's outcome")
    parser.add_argument("--only", nargs="*", default=None, help="only these types (extensions)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from markitdown import MarkItDown

    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings

    engine = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
    converter = MarkItDown(enable_plugins=False)
    refs, vecs = references(args.corpora), vectors(args.corpora)
    rows: dict[str, list[tuple[Path, Outcome, Outcome]]] = collections.defaultdict(list)
    for path in corpus_files(args.corpora):
        kind = kind_of(path)
        if args.only is not None and kind not in args.only:
            continue
        ours = platform_read(path, engine, args.max_pages)
        theirs = markitdown_read(path, converter)
        rows[kind].append((path, ours, theirs))
        if args.list:
            extra = ""
            if path.name in refs:
                extra = f" recall {recall(refs[path.name], ours.text):.2f} / {recall(refs[path.name], theirs.text):.2f}"
            print(f"{kind:6} {ours.status:28} {ours.seconds:7.2f}s | {theirs.status:24} {theirs.seconds:7.2f}s{extra} "
                  f"{','.join(ours.warnings)}  {path.relative_to(args.corpora)}", flush=True)
    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}\n")
    print("| type | files | platform: read (with text) | platform: refused (by code) | platform s/file | markitdown: read (with text) | "
          "markitdown: failed | markitdown s/file | word recall (files): platform / markitdown | vectors: platform / markitdown |")
    print("|---|---:|---:|---|---:|---:|---|---:|---|---|")
    for kind in sorted(rows, key=lambda k: (-len(rows[k]), k)):
        print(_row(kind, rows[kind], refs, vecs))


def _row(kind: str, items: list[tuple[Path, Outcome, Outcome]], refs: dict[str, str], vecs: dict[str, tuple[list[str], list[str]]]) -> str:
    ours_read = sum(o.status == "read" for _, o, _ in items)
    theirs_read = sum(t.status == "read" for _, _, t in items)
    ours_text = sum(o.status == "read" and bool(_WORD.search(o.text)) for _, o, _ in items)
    theirs_text = sum(t.status == "read" and bool(_WORD.search(t.text)) for _, _, t in items)
    refused = collections.Counter(o.status for _, o, _ in items if o.status != "read")
    failed = collections.Counter(t.status for _, _, t in items if t.status != "read")
    scored = [(recall(refs[p.name], o.text), recall(refs[p.name], t.text)) for p, o, t in items if p.name in refs]
    recall_cell = (f"{statistics.mean(a for a, _ in scored):.2f} / {statistics.mean(b for _, b in scored):.2f} ({len(scored)})"
                   if scored else "")
    found = [0, 0, 0]
    for path, ours, theirs in items:
        include, exclude = vecs.get(path.name, ([], []))
        for text in include:
            found[0] += 1
            found[1] += _plain(text) in _plain(ours.text)
            found[2] += _plain(text) in _plain(theirs.text)
        for text in exclude:
            found[0] += 1
            found[1] += _plain(text) not in _plain(ours.text)
            found[2] += _plain(text) not in _plain(theirs.text)
    vector_cell = f"{found[1]} / {found[2]} of {found[0]}" if found[0] else ""
    return (f"| {kind} | {len(items)} | {ours_read} ({ours_text}) | {_codes(refused)} | {statistics.median(o.seconds for _, o, _ in items):.3f} | "
            f"{theirs_read} ({theirs_text}) | {_codes(failed)} | {statistics.median(t.seconds for _, _, t in items):.3f} | {recall_cell} | {vector_cell} |")


def _codes(counts: collections.Counter[str]) -> str:
    return ", ".join(f"{code} {count}" for code, count in counts.most_common()) or "none"


if __name__ == "__main__":
    main()
