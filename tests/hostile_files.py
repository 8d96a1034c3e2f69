"""Hostile Office and HTML files, built in code (none is stored): small files that declare a huge task.

Each ``CASES`` entry writes one file of the table of issue 42 (the budget of work per document) into a folder and
names the limit its refusal must name. The hostile-input tests (tests/ocr/test_hostile_budget.py) and the bench
(benchmarks/hostile_budget.py) both read them through the real intake path in a child process.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ocr_platform.core.settings import WORK_BUDGET_ENV

_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_MAIN = {
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
}
_SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
_SLIDE_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"


def _package(path: Path, kind: str, main: str, parts: dict[str, bytes], overrides: dict[str, str]) -> Path:
    """A minimal Office package: content types, the root relationship to ``main``, and ``parts``."""
    types = "".join(f'<Override PartName="/{name}" ContentType="{value}"/>' for name, value in {main: _MAIN[kind], **overrides}.items())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", f'<?xml version="1.0"?><Types xmlns="{_CT}"><Default Extension="rels" '
                         f'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
                         f'ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>{types}</Types>')
        archive.writestr("_rels/.rels", f'<?xml version="1.0"?><Relationships xmlns="{_REL}"><Relationship Id="rId1" '
                         f'Type="{_OFFICE_REL}/officeDocument" Target="{main}"/></Relationships>')
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def _rels(targets: list[str], kind: str) -> bytes:
    rows = "".join(f'<Relationship Id="rId{n}" Type="{_OFFICE_REL}/{kind}" Target="{target}"/>' for n, target in enumerate(targets, 1))
    return f'<?xml version="1.0"?><Relationships xmlns="{_REL}">{rows}</Relationships>'.encode()


def _xlsx(path: Path, sheets: list[bytes], *, names: int = 0, part: str = "xl/worksheets/sheet{}.xml") -> Path:
    """An XLSX of ``sheets`` (one part each) or, with ``names``, that many sheet entries sharing the first part."""
    count = names or len(sheets)
    entries = "".join(f'<sheet name="S{n}" sheetId="{n}" state="{"hidden" if n > 1 else "visible"}" r:id="rId{n}"/>'
                      for n in range(1, count + 1))
    workbook = f'<?xml version="1.0"?><workbook xmlns="{_S}" xmlns:r="{_OFFICE_REL}"><sheets>{entries}</sheets></workbook>'
    parts = {part.format(n + 1): data for n, data in enumerate(sheets)}
    targets = [part.format(1 if names else n).removeprefix("xl/") for n in range(1, count + 1)]
    overrides = {name: _SHEET_TYPE for name in parts}
    return _package(path, "xlsx", "xl/workbook.xml", {"xl/workbook.xml": workbook.encode(),
                    "xl/_rels/workbook.xml.rels": _rels(targets, "worksheet"), **parts}, overrides)


def _sheet(body: str, merges: tuple[str, ...] = ()) -> bytes:
    cells = "".join(f'<mergeCell ref="{ref}"/>' for ref in merges)
    merged = f'<mergeCells count="{len(merges)}">{cells}</mergeCells>' if merges else ""
    return f'<?xml version="1.0"?><worksheet xmlns="{_S}"><sheetData>{body}</sheetData>{merged}</worksheet>'.encode()


def _pptx(path: Path, slides: list[bytes], *, uses: int = 0) -> Path:
    count = uses or len(slides)
    entries = "".join(f'<p:sldId id="{256 + n}" r:id="rId{n}"/>' for n in range(1, count + 1))
    presentation = f'<?xml version="1.0"?><p:presentation xmlns:p="{_P}" xmlns:r="{_OFFICE_REL}"><p:sldIdLst>{entries}</p:sldIdLst></p:presentation>'
    parts = {f"ppt/slides/slide{n + 1}.xml": data for n, data in enumerate(slides)}
    targets = [f"slides/slide{1 if uses else n}.xml" for n in range(1, count + 1)]
    return _package(path, "pptx", "ppt/presentation.xml", {"ppt/presentation.xml": presentation.encode(),
                    "ppt/_rels/presentation.xml.rels": _rels(targets, "slide"), **parts}, {name: _SLIDE_TYPE for name in parts})


def _slide(body: str) -> bytes:
    return (f'<?xml version="1.0"?><p:sld xmlns:p="{_P}" xmlns:a="{_A}"><p:cSld><p:spTree><p:graphicFrame><a:graphic>'
            f'<a:graphicData>{body}</a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>').encode()


def _docx(path: Path, body: str, *, main: str = "word/document.xml", extra: dict[str, bytes] | None = None) -> Path:
    document = f'<?xml version="1.0"?><w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>'.encode()
    return _package(path, "docx", main, {main: document, **(extra or {})}, {})


def _png(width: int, height: int) -> bytes:
    """A white PNG of ``width`` x ``height`` (grey, one byte a pixel), compressed to a few kilobytes a megapixel."""
    raw = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * width
    body = b"".join(raw.compress(row) for _ in range(height)) + raw.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x00\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def merges_across_the_sheet(path: Path) -> Path:
    return _xlsx(path, [_sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>',
                               tuple(f"A{n * 26215 + 1}:XFD{min(n * 26215 + 26215, 1048576)}" for n in range(40)))])


def one_range_a1_xfd1048576(path: Path) -> Path:
    return _xlsx(path, [_sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>', ("A1:XFD1048576",))])


def small_merges(path: Path) -> Path:
    return _xlsx(path, [_sheet("", (*(f"A{n}:B{n}" for n in range(1, 200)), "C1:C1048576", "D1:D1048576"))])


def far_cells(path: Path) -> Path:
    return _xlsx(path, [_sheet('<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row>')])


def pptx_huge_spans(path: Path) -> Path:
    cell = '<a:tc gridSpan="{}" rowSpan="{}"><a:txBody><a:p><a:r><a:t>x</a:t></a:r></a:p></a:txBody></a:tc>'
    table = f'<a:tbl><a:tblGrid><a:gridCol w="1"/></a:tblGrid><a:tr h="1">{cell.format(100000, 100000)}</a:tr></a:tbl>'
    return _pptx(path, [_slide(table)])


def docx_huge_gridspan(path: Path) -> Path:
    row = '<w:tr><w:tc><w:tcPr><w:gridSpan w:val="2000000"/></w:tcPr><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr>'
    return _docx(path, f'<w:tbl><w:tblGrid><w:gridCol/></w:tblGrid>{row * 20}</w:tbl>')


def xlsx_10000_shared_sheets(path: Path) -> Path:
    return _xlsx(path, [_sheet('<row r="1"><c r="A1"><v>1</v></c></row>')], names=10_000)


def xlsx_900_shared_dense_sheets(path: Path) -> Path:
    """Under the sheet limit, but each use of the one part re-reads its 40,000 cells."""
    rows = "".join(f'<row r="{r}">' + "".join(f'<c r="{c}{r}"><v>{r}</v></c>' for c in "ABCDEFGHIJ") + "</row>" for r in range(1, 4001))
    return _xlsx(path, [_sheet(rows)], names=900)


def docx_many_paragraphs(path: Path) -> Path:
    words = os.urandom(200_000).hex()  # text that does not compress much, so no ZIP ratio check stops it first
    return _docx(path, "".join(f"<w:p><w:r><w:t>{words[i:i + 8]}</w:t></w:r></w:p>" for i in range(0, len(words), 8)))


def pptx_5000_shared_slides(path: Path) -> Path:
    return _pptx(path, [_slide("")], uses=5_000)


def docx_part_name_dodges(path: Path) -> Path:
    """The main part under a name that is not ``.xml`` (told by its content type): 70 MB of numbered paragraphs."""
    body = "".join(f"<w:p><w:r><w:t>Paragraph {n} of the report.</w:t></w:r></w:p>" for n in range(1_100_000))
    return _docx(path, body, main="word/document.bin")


def xlsx_rows_under_another_name(path: Path) -> Path:
    rows = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}"><v>{r}</v></c></row>' for r in range(1, 1_000_001))
    return _xlsx(path, [_sheet(rows)], part="xl/data/rows{}.bin")


def html_of_tags(path: Path) -> Path:
    path.write_bytes(b"<html><body>" + b"<span>x</span>" * 700_000 + b"</body></html>")
    return path


def html_of_cells(path: Path) -> Path:
    path.write_bytes(b"<table>" + (b"<tr>" + b"<td>1</td>" * 50 + b"</tr>") * 16_000 + b"</table>")
    return path


def html_deep(path: Path) -> Path:
    path.write_bytes(b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000 + b"</body></html>")
    return path


def html_data_pictures(path: Path) -> Path:
    picture = base64.b64encode(_png(8000, 8000)).decode()
    path.write_bytes(("<html><body>" + f'<p><img src="data:image/png;base64,{picture}"></p>' * 40 + "</body></html>").encode())
    return path


def docx_big_picture(path: Path, count: int = 1) -> Path:
    """A DOCX (python-docx) of ``count`` different white pictures of about 79.2 million pixels each, just under the
    80 million of one image, a few dozen kilobytes each."""
    import docx

    document = docx.Document()
    document.add_paragraph("Pictures")
    for n in range(count):
        document.add_picture(io.BytesIO(_png(8_900 - n, 8_900)))
    document.save(str(path))
    return path


def pdf_content_bomb(path: Path) -> Path:
    """A one-page PDF of 76 KB whose page draws three million small rectangles (39 MB of instructions)."""
    content = zlib.compress(b"0 0 1 1 re f\n" * 3_000_000, 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"]
    data = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(data))
        data += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    table = len(data)
    data += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    data += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)
    path.write_bytes(bytes(data))
    return path


@dataclass(frozen=True)
class Case:
    """One hostile file: its ``name``, how to ``build`` it, the limit its refusal names, and the refusal's code."""

    name: str
    suffix: str
    build: Callable[[Path], Path]
    limit: str
    code: str = "document_too_large"


CASES = (
    Case("xlsx-merges-span-the-sheet", "xlsx", merges_across_the_sheet, "max_table_cells"),
    Case("xlsx-one-range-A1-XFD1048576", "xlsx", one_range_a1_xfd1048576, "max_table_cells"),
    Case("xlsx-small-merges-tall-column", "xlsx", small_merges, "max_table_cells"),
    Case("xlsx-two-far-cells", "xlsx", far_cells, "max_table_cells"),
    Case("pptx-table-huge-spans", "pptx", pptx_huge_spans, "max_table_cells"),
    Case("docx-table-huge-gridspan", "docx", docx_huge_gridspan, "max_table_cells"),
    Case("xlsx-10000-sheets-one-part", "xlsx", xlsx_10000_shared_sheets, "max_units"),
    Case("xlsx-900-sheets-one-dense-part", "xlsx", xlsx_900_shared_dense_sheets, "max_cells"),
    Case("pptx-5000-slides-one-part", "pptx", pptx_5000_shared_slides, "max_units"),
    Case("docx-50000-short-paragraphs", "docx", docx_many_paragraphs, "max_paragraphs"),
    Case("docx-main-part-named-bin", "docx", docx_part_name_dodges, "max_part_bytes"),
    Case("xlsx-1m-rows-part-named-bin", "xlsx", xlsx_rows_under_another_name, "max_part_bytes"),
    Case("html-tags", "html", html_of_tags, "max_html_nodes"),
    Case("html-table-cells", "html", html_of_cells, "max_html_nodes"),
    Case("html-deep", "html", html_deep, "max_html_depth"),
    Case("html-data-pictures", "html", html_data_pictures, "max_picture_pixels"),
    Case("docx-pictures-near-the-pixel-limit", "docx", lambda path: docx_big_picture(path, 3), "max_picture_pixels"),
    Case("pdf-page-of-three-million-rectangles", "pdf", pdf_content_bomb, "max_page_content_bytes", "page_too_large"),
)
#: The setting that raises each limit, as the refusal names it.
SETTINGS = {**WORK_BUDGET_ENV, "max_page_content_bytes": "OCR_MAX_PAGE_CONTENT_BYTES"}


MEMORY_CEILING_BYTES = 1536 * 1024 * 1024
TIME_CEILING_SECONDS = 10

#: The child: the processor's reading path for an Office or HTML file, under the memory ceiling; it prints the
#: refusal (or that there was none) as one JSON line, and its own peak resident memory.
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({ceiling}, {ceiling}))
from pathlib import Path
from ocr_platform.core.errors import JobError
from ocr_platform.document.intake import open_document
from ocr_platform.engines.native_reading import native_result

class NoEngine:
    info = {{}}
    def predict(self, *args, **kwargs):
        raise AssertionError("a picture reached the engine: the budget let the file through")

try:
    path = Path(sys.argv[1])
    if path.suffix == ".pdf":  # the page loop renders each page on its own
        with open_document(path) as document:
            for number in document.selected_pages:
                document.render(number)
    else:
        native_result(path, job_id="hostile", model="pp-ocrv5", engine=NoEngine())
    outcome = {{"code": None, "message": "read"}}
except JobError as err:
    outcome = {{"code": str(err.code), "message": err.message}}
# VmHWM: this program's own peak (ru_maxrss would keep the forking parent's from before exec)
peak = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
outcome["peak_kb"] = int(peak[0]) if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(outcome))
"""


def run_child(path: Path, env: dict[str, str] | None = None, timeout: float = TIME_CEILING_SECONDS) -> dict[str, object]:
    """Read ``path`` in a child process under the ceilings; its outcome (``code``, ``message``, ``peak_kb``,
    ``seconds``: the child's whole run, Python's start included)."""
    repo = Path(__file__).resolve().parents[1]
    started = time.perf_counter()
    environ = {**os.environ, "PYTHONPATH": f"{repo / 'lambdas'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **(env or {})}
    done = subprocess.run([sys.executable, "-c", CHILD.format(ceiling=MEMORY_CEILING_BYTES), str(path)], capture_output=True,
                          text=True, timeout=timeout, env=environ, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the child ended {done.returncode}: {done.stderr[-2000:]}")
    outcome: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    outcome["seconds"] = time.perf_counter() - started
    return outcome


def sizes(folder: Path) -> dict[str, int]:
    """Build every case into ``folder``; ``{name: bytes}``."""
    return {case.name: case.build(folder / f"{case.name}.{case.suffix}").stat().st_size for case in CASES}


