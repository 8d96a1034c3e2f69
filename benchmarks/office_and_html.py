"""Office and HTML files on the ``pp-ocrv5`` route: seconds per file and the share of it spent on OCR, by input kind.

Each kind is measured with and without embedded pictures, on public files from the libraries' source
distributions (``--sdists DIR`` finds or fetches them with pip):

- **DOCX**: python-docx 1.2.0's test files (``tests/test_files/``, ``features/steps/test_files/``);
- **PPTX**: python-pptx 1.0.2's test files;
- **XLSX**: the workbooks python-pptx's test decks embed (``ppt/embeddings/*.xlsx``); *with pictures*: the same
  sheets with python-docx's test pictures anchored in them (openpyxl), as no public workbook with pictures ships;
- **HTML**: readme_renderer 44.0's test fixtures (``tests/fixtures/*.html``); *with pictures*: the same pages with
  python-docx's test pictures embedded as ``data:`` URIs.

Every file goes through ``ocr_document``, the processor's code path (intake, conversion, the pictures through the
engine), the engine loaded once beforehand; ``--repeat`` keeps each file's fastest pass. "OCR share" is the
``picture_ocr`` timing over the whole read.

    .venv/bin/python benchmarks/office_and_html.py --sdists /tmp/sdists

Not part of the test suite; docs/using-it/office-and-html.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import base64
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

SDISTS = {"python-docx": "1.2.0", "python-pptx": "1.0.2", "readme_renderer": "44.0"}
DOCX_TEXT = ["tests/test_files/test.docx", "features/steps/test_files/tbl-having-tables.docx",
             "features/steps/test_files/par-known-paragraphs.docx", "features/steps/test_files/blk-paras-and-tables.docx",
             "features/steps/test_files/hdr-header-footer.docx", "features/steps/test_files/comments-rich-para.docx"]
DOCX_PICTURES = ["tests/test_files/having-images.docx", "features/steps/test_files/shp-inline-shape-access.docx"]
PPTX_TEXT = ["features/steps/test_files/txt-text.pptx", "features/steps/test_files/tbl-cell.pptx",
             "features/steps/test_files/sld-notes.pptx", "features/steps/test_files/cht-charts.pptx",
             "features/steps/test_files/txt-paragraph-spacing.pptx", "features/steps/test_files/shp-groupshape.pptx"]
PPTX_PICTURES = ["features/steps/test_files/shp-picture.pptx", "tests/test_files/test_slides.pptx",
                 "features/steps/test_files/test-image-jpg-mime.pptx", "features/steps/test_files/ph-populated-placeholders.pptx"]
HTML_TEXT = ["tests/fixtures/test_rst_tables.html", "tests/fixtures/test_rst_contents.html", "tests/fixtures/test_rst_003.html",
             "tests/fixtures/test_GFM_001.html", "tests/fixtures/test_GFM_003.html", "tests/fixtures/test_CommonMark_003.html"]
PICTURES = ["tests/test_files/python-powered.png", "tests/test_files/monty-truth.png", "tests/test_files/python-icon.png"]


def sdist_file(directory: Path, name: str, member: str) -> Path:
    """``member`` of the ``name`` sdist, unpacked under ``directory`` (downloaded there with pip if absent)."""
    version = SDISTS[name]
    folder = directory / f"{name.replace('-', '_')}-{version}"
    if not folder.is_dir():
        archives = list(directory.glob(f"{name.replace('-', '_')}-{version}.tar.gz")) + list(directory.glob(f"{name}-{version}.tar.gz"))
        if not archives:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                            "-d", str(directory), f"{name}=={version}"], check=True)
            archives = list(directory.glob(f"{name.replace('-', '_')}-{version}.tar.gz")) + list(directory.glob(f"{name}-{version}.tar.gz"))
        with tarfile.open(archives[0]) as tar:
            tar.extractall(directory, filter="data")
    return folder / member


def file_sets(sdists: Path, work: Path) -> dict[str, list[Path]]:
    import openpyxl
    from openpyxl.drawing.image import Image

    def docx(member: str) -> Path:
        return sdist_file(sdists, "python-docx", member)

    def pptx(member: str) -> Path:
        return sdist_file(sdists, "python-pptx", member)

    pictures = [docx(member) for member in PICTURES]
    workbooks = []
    for deck in PPTX_TEXT + PPTX_PICTURES:
        with zipfile.ZipFile(pptx(deck)) as archive:
            for name in archive.namelist():
                if name.startswith("ppt/embeddings/") and name.endswith(".xlsx") and len(workbooks) < 6:
                    target = work / f"book-{len(workbooks) + 1}.xlsx"
                    target.write_bytes(archive.read(name))
                    workbooks.append(target)
    with_pictures = []
    for index, book in enumerate(workbooks[:4]):
        loaded = openpyxl.load_workbook(book)
        loaded.active.add_image(Image(str(pictures[index % len(pictures)])), "H2")
        target = work / f"book-picture-{index + 1}.xlsx"
        loaded.save(target)
        with_pictures.append(target)
    pages = [sdist_file(sdists, "readme_renderer", member) for member in HTML_TEXT]
    html_pictures = []
    for index, page in enumerate(pages[:4]):
        data = base64.b64encode(pictures[index % len(pictures)].read_bytes()).decode()
        target = work / f"page-picture-{index + 1}.html"
        target.write_text(f'<html><body>{page.read_text(encoding="utf-8")}<p><img src="data:image/png;base64,{data}"></p></body></html>',
                          encoding="utf-8")
        html_pictures.append(target)
    return {
        "DOCX": [docx(m) for m in DOCX_TEXT], "DOCX with pictures": [docx(m) for m in DOCX_PICTURES],
        "PPTX": [pptx(m) for m in PPTX_TEXT], "PPTX with pictures": [pptx(m) for m in PPTX_PICTURES],
        "XLSX": workbooks, "XLSX with pictures": with_pictures,
        "HTML": pages, "HTML with pictures": html_pictures,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdists", type=Path, default=Path(tempfile.gettempdir()) / "sdists")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    args.sdists.mkdir(parents=True, exist_ok=True)

    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.reading import ocr_document
    from ocr_platform.engines.settings import PaddleSettings

    engine = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, pp-ocrv5")
    print("| input | files | pages | pictures placed | s/file (median) | s/file (max) | OCR share |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, files in file_sets(args.sdists, Path(tmp)).items():
            seconds, ocr, pages, pictures = [], 0.0, 0, 0
            for path in files:
                best = None
                for _ in range(args.repeat):
                    result, raw = ocr_document(path, job_id="bench", model="pp-ocrv5", engine=engine)
                    if best is None or result["timings"]["ocr"] < best[0]["timings"]["ocr"]:
                        best = (result, raw)
                assert best is not None
                result, raw = best
                seconds.append(result["timings"]["ocr"])
                ocr += result["timings"]["picture_ocr"]
                pages += result["page_count"]
                pictures += len({entry["picture"] for entry in raw["pictures"]})
            share = ocr / sum(seconds) if sum(seconds) else 0.0
            print(f"| {kind} | {len(files)} | {pages} | {pictures} | {statistics.median(seconds):.3f} | {max(seconds):.3f} | {share:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
