"""``language: auto`` and the script of scanned pages: a page in a script the job did not name is read with the
recogniser that reads it, or carries a ``language_mismatch`` warning; every page says its ``script``.

The scans here are public PDFs rendered to PNG (no text layer). Only the multilingual PP-OCRv5 recogniser ships in a
package, so on this machine a Hangul or Arabic scan is in a script no installed recogniser reads: the warning names
``Unknown``. Where the Korean or Arabic recogniser is installed (the processor image bakes all of them) it names the
script, and ``auto`` reads the page with it."""

from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path

import pytest

from ocr_platform.core.text_metrics import word_f1
from ocr_platform.cpu.job_runner import ocr_document
from ocr_platform.engines.script_detection import SCRIPT_SCORE, UNKNOWN_SCRIPT
from tests.documents import PUBLIC, SCRIPT_LAYER_PDFS

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _layer_text(path: Path, page: int) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return str(pdf[page - 1].get_textpage().get_text_range())
    finally:
        pdf.close()


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Public PDF pages rendered at 200 dpi to PNG: images with no text layer."""
    import pypdfium2 as pdfium

    root = tmp_path_factory.mktemp("scans")
    rendered = {}
    for name, page in (("hangul-jamo.pdf", 1), ("arabic-cid-truetype.pdf", 1)):
        pdf = pdfium.PdfDocument(str(PUBLIC / name))
        try:
            path = root / f"{Path(name).stem}.png"
            pdf[page - 1].render(scale=200 / 72).to_pil().convert("RGB").save(path)
            rendered[name] = path
        finally:
            pdf.close()
    return rendered


def _read(ppocr, path: Path, language: str, pages: str | None = None) -> tuple[dict, dict, float]:
    started = time.perf_counter()
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv5", engine=ppocr, language=language, pages=pages)
    return result, raw, time.perf_counter() - started


@pytest.mark.parametrize(("name", "script", "recogniser"), [
    ("hangul-jamo.pdf", "Hangul", "korean_PP-OCRv5_mobile_rec"),
    ("arabic-cid-truetype.pdf", "Arabic", "arabic_PP-OCRv5_mobile_rec"),
])
@pytest.mark.parametrize("language", ["en", "auto"])
def test_a_scan_in_a_script_the_job_did_not_name_carries_language_mismatch_or_is_read_with_auto(
    ppocr, scans: dict[str, Path], name: str, script: str, recogniser: str, language: str
) -> None:
    installed = ppocr.has_model(recogniser)
    result, raw, seconds = _read(ppocr, scans[name], language)

    [page] = result["pages"]
    check = raw["pages"][0]["script_check"]
    assert check["median_score"] < SCRIPT_SCORE  # the multilingual recogniser reads it as garbage
    assert page["script"] == (script if installed else UNKNOWN_SCRIPT)
    if language == "auto" and installed:
        assert result["warnings"] == [] and recogniser in result["engine"]["models"]
    else:
        [warning] = result["warnings"]
        assert (warning["code"], warning["requested"], warning["ran"]) == ("language_mismatch", language, page["script"])
        assert "Page 1 " in warning["message"]
    print(json.dumps({"scan": name, "language": language, "seconds": round(seconds, 3), "script_check_s": result["timings"]["script_check"]}))


@pytest.mark.parametrize("language", ["en", "auto"])
def test_a_scan_in_a_script_the_recogniser_reads_costs_nothing_more_and_says_its_script(ppocr, language: str) -> None:
    result, raw, _ = _read(ppocr, SAMPLES / "scan.png", language)

    [page] = result["pages"]
    assert page["script"] == "Latin" and "language" not in page
    assert raw["pages"][0]["script_check"]["median_score"] >= SCRIPT_SCORE
    assert "probes" not in raw["pages"][0]["script_check"] and result["timings"]["script_check"] == 0.0
    assert result["warnings"] == []
    assert "Invoice 2026-0042" in result["text"]


@pytest.mark.parametrize(
    ("name", "pages", "script", "language"),
    SCRIPT_LAYER_PDFS,
)
def test_auto_on_born_digital_pages_gives_each_page_its_script_and_the_layer_text(
    ppocr, name: str, pages: str, script: str, language: str | None
) -> None:
    path = PUBLIC / name
    result, _, seconds = _read(ppocr, path, "auto", pages)

    for page in result["pages"]:
        assert page["text_source"] == "text_layer"
        assert (page["script"], page.get("language")) == (script, language)
        assert word_f1(_layer_text(path, page["page"]), "\n".join(line["text"] for line in page["lines"])) >= 0.95
    assert result["warnings"] == []  # auto asked for no language, so none is mismatched
    print(json.dumps({"document": name, "seconds_per_page": round(seconds / len(result["pages"]), 3)}))


def test_arabic_vowel_marks_stay_on_their_letter(ppocr) -> None:
    """persian-pure-words.pdf page 3 puts each fathatan before its word in the content stream (pdfium hands 12 of the
    13 over on lines of their own): read from the layer, each ends its word, as typed."""
    result, _, _ = _read(ppocr, PUBLIC / "persian-pure-words.pdf", "auto", "3")

    [page] = result["pages"]
    texts = [line["text"] for line in page["lines"]]
    assert not [text for text in texts if unicodedata.category(text[0]) == "Mn"]
    words = result["text"].split()
    for word in ("اصلاً", "أبداً", "حتماً", "قطعاً", "اکیداً", "مثلاً", "تقریباً", "عمدتاً"):
        assert word in words, word
    assert sum(word.count("\u064b") for word in words) == 13


def test_the_cli_reads_with_lang_auto(ppocr, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli.commands import main

    output = tmp_path / "result.json"
    status = main(["ocr", str(PUBLIC / "hangul-jamo.pdf"), "--model", "pp-ocrv5", "--lang", "auto", "-o", str(output)])

    assert status == 0, capsys.readouterr().err
    result = json.loads(output.read_text(encoding="utf-8"))
    assert (result["pages"][0]["script"], result["pages"][0]["language"]) == ("Hangul", "korean")
    assert "ㄱ" in result["text"] and result["warnings"] == []


def test_pp_ocrv6_reads_auto_with_its_one_recogniser_and_flags_a_script_it_does_not_read(ppocr_v6, scans: dict[str, Path]) -> None:
    result, _ = ocr_document(scans["hangul-jamo.pdf"], job_id="t", model="pp-ocrv6", engine=ppocr_v6, language="auto")

    [page] = result["pages"]
    assert page["script"] == UNKNOWN_SCRIPT
    [warning] = result["warnings"]
    assert (warning["code"], warning["requested"], warning["ran"]) == ("language_mismatch", "auto", UNKNOWN_SCRIPT)


def test_auto_is_accepted_on_every_way_in() -> None:
    """The SQS message, the drop folder's language folder and the jobs API's body take ``auto`` as they take a code;
    the routes that read text lines take it when the job runs (the CLI: ``test_the_cli_reads_with_lang_auto``)."""
    from ocr_platform.engines.languages import check_ppocrv6_language, recognition_model_for
    from ocr_platform.handlers.api import CreateJobRequest
    from ocr_platform.inputs.inbox import parse_inbox_key
    from ocr_platform.jobs.messages import parse_job_message

    message = parse_job_message({"job_id": "j1", "model": "pp-ocrv5", "input": "s3://b/documents/j1/a.png", "language": "auto"})
    assert message.language == "auto" and message.to_body()["language"] == "auto"
    assert parse_inbox_key("inbox/pp-ocrv5/auto/scan.pdf") == ("pp-ocrv5", "auto", "scan.pdf")
    assert CreateJobRequest(filename="scan.pdf", model="pp-ocrv5", language="auto").language == "auto"
    assert recognition_model_for("auto") == "PP-OCRv5_mobile_rec" and check_ppocrv6_language("auto") is None
