"""Every document type the platform reads, through every way in, on one local stack: what a user would notice.

Each type is a small file made here, holding a known phrase (the Outlook and Office 97-2003 files, which no
well-kept Python library writes, are the public files of ``tests/other_documents.py``, with a phrase they hold), and
each goes in as a user sends it: ``ocr-platform run`` against the stack, ``ocr-platform ocr`` on this machine, an
SQS job message, the drop folder (``inbox/pp-ocrv5/``), the jobs API's upload form, an ``http`` URL the platform
fetches, and the web console in headless Chromium. Every combination must end ``COMPLETED`` with the phrase in the
result's text, no markup or MIME left in it, the ``document_type`` the bytes say, no warning, and no OCR model
loaded for a file read from its own content. ``pp-ocrv5`` (the CPU route) reads them all; a PDF with a text layer
and a scanned PNG are there for contrast.

The batch ways (SQS, drop folder, jobs API, URL) submit every type at once and are checked one combination at a
time; ``run`` and ``ocr`` run a file each, as a user types them. The console uploads every file in one pick of its
file chooser (it sends each through the jobs API, as above) and each job's result is opened in the console, so the
browser's share is one sign-in and a page view per type.
"""

from __future__ import annotations

import html
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests

from ocr_platform.cli.client import OcrClient, PlatformResources
from ocr_platform.local import stack, supervisor
from tests import documents
from tests import other_documents as more
from tests.browser import QUIET_FLAGS, chromium
from tests.local.folder_server import serving
from tests.local.sign_in import PASSWORD, choose_password, id_token, open_console, sign_in

MODEL = "pp-ocrv5"
WAIT_SECONDS = 240


@dataclass(frozen=True)
class Case:
    """One document type: the file (``make(folder)`` writes it), the ``document_type`` its bytes make it, and a
    phrase its result's text must hold."""

    kind: str
    make: Callable[[Path], Path]
    phrase: str

    @property
    def read_from_content(self) -> bool:
        return self.kind not in ("pdf", "png")


def _phrase(kind: str) -> str:
    """The phrase planted in a made file: an ampersand and a quote, which come back as themselves, not escaped."""
    return f"Quince & kiwi's {kind} 4417"


def _write(name: str, data: bytes | str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path
    return make


def _copy(source: Path, name: str) -> Callable[[Path], Path]:
    return lambda folder: _write(name, source.read_bytes())(folder)


def _docx(folder: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Every way in", level=1)
    document.add_paragraph(_phrase("docx"))
    document.add_table(rows=1, cols=2).rows[0].cells[0].text = "a cell"
    document.save(str(folder / "report.docx"))
    return folder / "report.docx"


def _xlsx(folder: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Prices"
    book.active.append(["Item", "Price"])
    book.active.append([_phrase("xlsx"), 4.5])
    book.save(folder / "sheet.xlsx")
    return folder / "sheet.xlsx"


def _pptx(folder: Path) -> Path:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Every way in"
    slide.placeholders[1].text = _phrase("pptx")
    deck.save(str(folder / "deck.pptx"))
    return folder / "deck.pptx"


def _eml(folder: Path) -> Path:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "Ann <ann@example.com>", "desk@example.com", "Every way in"
    message["Date"] = "Tue, 01 Oct 2024 12:34:56 -0500"
    message.set_content(_phrase("eml"))
    message.add_attachment(b"Item,Price\nTea,4.50\nCake,2.00\n", maintype="text", subtype="csv", filename="prices.csv")
    (folder / "mail.eml").write_bytes(bytes(message))
    return folder / "mail.eml"


def _odt(folder: Path) -> Path:
    import odfdo

    document = odfdo.Document("text")
    document.body.clear()
    document.body.append(odfdo.Header(1, "Every way in"))
    document.body.append(odfdo.Paragraph(_phrase("odt")))
    document.save(str(folder / "letter.odt"))
    return folder / "letter.odt"


def _epub(folder: Path) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("every-way-in")
    book.set_title("Every way in")
    book.set_language("en")
    chapter = epub.EpubHtml(title="One", file_name="one.xhtml", lang="en")
    chapter.content = f"<h1>Chapter one</h1><p>{html.escape(_phrase('epub'))}</p>"
    book.add_item(chapter)
    book.toc = [chapter]
    book.spine = [chapter]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(folder / "book.epub"), book)
    return folder / "book.epub"


def _pdf(folder: Path) -> Path:
    return documents.write_vector_pdf(folder / "report.pdf", [["Every way in", _phrase("pdf")]])


def _png(folder: Path) -> Path:
    return documents.write_png(folder / "scan.png", documents.ENGLISH_PAGES[0])


CASES = [
    Case("eml", _eml, _phrase("eml")),
    Case("msg", _copy(more.MSG, "message.msg"), "This is the body of the test email message"),
    Case("doc", _copy(more.DOC, "letter.doc"), "DOYLESTOWN, PA 18901"),
    Case("xls", _copy(more.XLS, "quiz.xls"), "What is 2+2?"),
    Case("ppt", _copy(more.PPT, "slides.ppt"), "Adding a Bullet Slide"),
    Case("odt", _odt, _phrase("odt")),
    Case("ods", lambda folder: more.ods(folder / "book.ods", _phrase("ods")), _phrase("ods")),
    Case("odp", lambda folder: more.odp(folder / "talk.odp", body=_phrase("odp")), _phrase("odp")),
    Case("rtf", _write("memo.rtf", r"{\rtf1\ansi\deff0{\fonttbl{\f0 Helvetica;}}\f0\pard Every way in\par " + _phrase("rtf") + r"\par}"),
         _phrase("rtf")),
    Case("epub", _epub, _phrase("epub")),
    Case("csv", _write("prices.csv", f'Item,Price,Unit\n"{_phrase("csv")}",4.50,kg\nTea,2.00,box\n'), _phrase("csv")),
    Case("md", _write("notes.md", f"# Every way in\n\n- first point\n- second point\n\n{_phrase('md')}, see [the docs](https://example.com).\n"),
         _phrase("md")),
    Case("txt", _write("notes.txt", f"Every way in\n\n{_phrase('txt')}\n"), _phrase("txt")),
    Case("docx", _docx, _phrase("docx")),
    Case("xlsx", _xlsx, _phrase("xlsx")),
    Case("pptx", _pptx, _phrase("pptx")),
    Case("html", _write("page.html", f"<!DOCTYPE html><html><head><title>Every way in</title></head><body><h1>Every way in</h1>"
                                     f"<p>{html.escape(_phrase('html'))}</p></body></html>"), _phrase("html")),
    Case("pdf", _pdf, _phrase("pdf")),
    Case("png", _png, documents.ENGLISH_PAGES[0][0]),
]
BY_KIND = {case.kind: case for case in CASES}
#: What must not be left in a result's text: HTML or XML tags, character references, RTF control words, MIME.
LEFT_MARKUP = re.compile(r"</?[A-Za-z][\w:-]*[\s/>]|&(amp|lt|gt|quot|#\d+);|\\(rtf|par|pard|f\d)\b|Content-(Type|Transfer-Encoding):|MIME-Version:")


def _waiting(browser: Any) -> Any:
    """A wait on the console that looks again where the jobs table, which it redraws every 2 s, went stale."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,))


def _assert_read(case: Case, result: dict[str, Any], job: dict[str, Any] | None) -> None:
    """What a user sees of a job (``None`` for ``ocr`` on this machine, which has none) and its result: COMPLETED, the
    phrase, no markup, its type, no warning, and no OCR model loaded for a file read from its own content."""
    if job is not None:
        assert job["status"] == "COMPLETED", job.get("error")
        assert job["document_type"] == case.kind and job.get("warnings", []) == [], job
    assert case.phrase in result["text"], result["text"][:500]
    assert not LEFT_MARKUP.search(result["text"]), LEFT_MARKUP.search(result["text"])
    assert result.get("document_type") == (case.kind if case.read_from_content else None)  # result.json has it for those only
    assert result["warnings"] == [] and result["model"] == MODEL and result["engine"]["name"], result["warnings"]
    models = result["engine"]["models"]
    assert (models == []) if case.read_from_content else models[:1] == ["PP-OCRv5_mobile_det"], models


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("every-type")
    return {case.kind: case.make(folder) for case in CASES}


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.StackInfo]:
    """One local stack for the module; a job that finds both processor slots taken is tried again after 1 s (20 s on
    AWS), as the batches here fill them at once."""
    home = tmp_path_factory.mktemp("every-way-in-stack")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(supervisor.STATE_DIR_ENV, str(home))
        patch.setenv("OCR_MODEL_HUB", "off")  # offline: every model from installed packages
        patch.setenv("OCR_MODEL_CACHE_DIR", str(home / "models"))
        options = stack.LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2, retry_delays_seconds=(0.2, 0.2),
                                     admission_retry_seconds=1)
        info, started = supervisor.up(options=options, timeout=300)  # a deadline: a busy machine only takes longer
        assert started
        try:
            for name, value in info.client_environment().items():
                patch.setenv(name, value)
            yield info
        finally:
            assert supervisor.down()


@pytest.fixture(autouse=True)
def local_aws(local: stack.StackInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every boto3 client of a test talks to the local stack (after the suite's no-real-AWS guard)."""
    for name, value in local.client_environment().items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="module")
def client(local: stack.StackInfo) -> OcrClient:
    return OcrClient(PlatformResources(local.bucket, local.queue_url, local.table))


@pytest.fixture(scope="module")
def file_server(files: dict[str, Path]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving the files, for the jobs that name a URL."""
    with serving(next(iter(files.values())).parent) as url:
        yield url


class ApiUser:
    """A jobs API user: creates a job, uploads its file with the presigned form, reads the job and its result."""

    def __init__(self, api_url: str, token: str) -> None:
        self.api, self.headers = api_url, {"Authorization": f"Bearer {token}"}

    def submit(self, path: Path) -> str:
        created = requests.post(f"{self.api}/jobs", json={"filename": path.name, "model": MODEL}, headers=self.headers, timeout=30)
        assert created.status_code == 201, created.text
        form = created.json()["upload"]
        uploaded = requests.post(form["url"], data=form["fields"], files={"file": (path.name, path.read_bytes())}, timeout=60)
        assert uploaded.status_code == 204, uploaded.text
        return str(created.json()["job_id"])

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(requests.get(f"{self.api}/jobs/{job_id}", headers=self.headers, timeout=30).json())

    def result(self, job_id: str) -> dict[str, Any]:
        link = requests.get(f"{self.api}/jobs/{job_id}/result", headers=self.headers, timeout=30).json()
        return dict(requests.get(link["result"], timeout=30).json())


def _by_sqs_message(client: OcrClient, local: stack.StackInfo, path: Path) -> str:
    """As docs/using-it/aws-cli.md does it: put the file, send the job's message (the invoker writes its item)."""
    job_id = uuid.uuid4().hex
    key = f"documents/{job_id}/{path.name}"
    client.s3.upload_file(str(path), local.bucket, key)
    boto3.client("sqs").send_message(QueueUrl=local.queue_url, MessageBody=json.dumps(
        {"job_id": job_id, "model": MODEL, "input": f"s3://{local.bucket}/{key}", "language": "en"}))
    return job_id


def _by_drop_folder(client: OcrClient, local: stack.StackInfo, path: Path) -> str:
    """A file written under ``inbox/pp-ocrv5/`` and nothing else; its job's id comes from the object."""
    uri = f"s3://{local.bucket}/inbox/{MODEL}/{path.name}"
    client.s3.upload_file(str(path), local.bucket, uri.split("/", 3)[3])
    return client.inbox_job_id(uri)


BATCH_WAYS = ("sqs-message", "drop-folder", "jobs-api", "url")


@dataclass
class Batch:
    """The jobs the batch ways started, by (way, kind), and how to read each back as its way's user does."""

    jobs: dict[tuple[str, str], str]
    api: ApiUser
    client: OcrClient

    def finished(self, way: str, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
        job_id = self.jobs[way, kind]
        deadline = time.monotonic() + WAIT_SECONDS
        read = self.api.job if way == "jobs-api" else self._item
        while (job := read(job_id)).get("status") not in ("COMPLETED", "FAILED"):
            assert time.monotonic() < deadline, f"{way} {kind}: still {job.get('status')} after {WAIT_SECONDS} s"
            time.sleep(0.2)
        if job["status"] != "COMPLETED":
            return job, {}
        return job, (self.api.result(job_id) if way == "jobs-api" else self.client.result(job_id))

    def _item(self, job_id: str) -> dict[str, Any]:
        return dict(self.client.store.get(job_id) or {})


@pytest.fixture(scope="module")
def batch(local: stack.StackInfo, client: OcrClient, files: dict[str, Path], file_server: str) -> Batch:
    """Every type sent every batch way at once, before the first is checked."""
    api = ApiUser(local.api_url, id_token(local, "every-way@example.com"))
    jobs: dict[tuple[str, str], str] = {}
    for kind, path in files.items():
        jobs["sqs-message", kind] = _by_sqs_message(client, local, path)
        jobs["drop-folder", kind] = _by_drop_folder(client, local, path)
        jobs["jobs-api", kind] = api.submit(path)
        jobs["url", kind] = client.submit(f"{file_server}/{path.name}", model=MODEL)["job_id"]
    return Batch(jobs, api, client)


@pytest.mark.parametrize("kind", BY_KIND)
@pytest.mark.parametrize("way", BATCH_WAYS)
def test_a_type_sent_a_batch_way_in_is_read(way: str, kind: str, batch: Batch) -> None:
    job, result = batch.finished(way, kind)
    assert job["status"] == "COMPLETED", job.get("error")
    _assert_read(BY_KIND[kind], result, job)


@pytest.mark.parametrize("kind", BY_KIND)
def test_ocr_platform_run_reads_a_type_through_the_stack(kind: str, files: dict[str, Path], client: OcrClient, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    code = cli.main(["run", str(files[kind]), "--model", MODEL, "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 0 and "COMPLETED in" in err and "Traceback" not in err and "warning" not in err, err
    result = json.loads(output.read_text(encoding="utf-8"))
    _assert_read(BY_KIND[kind], result, client.status(result["job_id"]))


@pytest.mark.parametrize("kind", BY_KIND)
def test_ocr_platform_ocr_reads_a_type_on_this_machine(kind: str, files: dict[str, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from ocr_platform.cli import commands as cli

    output = tmp_path / "result.json"
    code = cli.main(["ocr", str(files[kind]), "--model", MODEL, "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err and "warning" not in err, err
    result = json.loads(output.read_text(encoding="utf-8"))
    _assert_read(BY_KIND[kind], result, None)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium(window="1400x1000", extra_flags=QUIET_FLAGS)


@pytest.fixture(scope="module")
def console(local: stack.StackInfo, files: dict[str, Path], browser: Any) -> dict[str, str]:
    """The console signed in as the stack's user, every file uploaded in one pick of its file chooser: each type's
    job id, read from the jobs table the console shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    wait = _waiting(browser)
    open_console(browser, local)
    sign_in(browser, local.console_user, local.console_password)
    choose_password(browser, PASSWORD)
    wait.until(ready.visibility_of_element_located((By.ID, "jobs-view")))
    browser.find_element(By.ID, "files").send_keys("\n".join(str(path) for path in files.values()))
    names = {path.name: kind for kind, path in files.items()}

    def listed(driver: Any) -> dict[str, str] | bool:
        rows = {row.find_element(By.XPATH, "./td[1]").text: row.get_attribute("data-job-id")
                for row in driver.find_elements(By.CSS_SELECTOR, "#jobs tbody tr")}
        return len(rows) == len(names) and {names[name]: job_id for name, job_id in rows.items()}

    return dict(wait.until(listed, "the console did not list every upload"))


@pytest.mark.parametrize("kind", BY_KIND)
def test_the_console_uploads_a_type_and_shows_its_text(kind: str, console: dict[str, str], browser: Any, client: OcrClient) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    job_id = console[kind]
    wait = _waiting(browser)
    browser.get(f"{browser.current_url.split('#')[0]}#/")

    def row_status(driver: Any) -> str | bool:  # the jobs view refreshes its table every 2 s
        cells = driver.find_elements(By.CSS_SELECTOR, f"tr[data-job-id='{job_id}'] td.status")
        return bool(cells) and cells[0].get_attribute("class").split("status-")[-1] in ("COMPLETED", "FAILED") and cells[0].text

    shown = wait.until(row_status, f"the console never showed {kind}'s job ended")
    assert shown == "COMPLETED", shown  # no warning under it either
    browser.get(f"{browser.current_url.split('#')[0]}#/jobs/{job_id}")
    text = wait.until(ready.visibility_of_element_located((By.ID, "text")))
    wait.until(lambda driver: BY_KIND[kind].phrase in text.text)
    _assert_read(BY_KIND[kind], client.result(job_id), client.status(job_id))
