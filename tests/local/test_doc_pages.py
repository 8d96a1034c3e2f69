"""Every page's runnable snippets, run as written on a local stack of the test's own, page by page.

The conventions (what runs, what is only parsed, how a page shows what a command prints) are
``tests/doc_snippets.py``'s. One stack serves every page (its own state directory and ports, short time scales);
each page gets a fresh copy of ``samples/`` and ``docs/schemas/`` as its working directory and a shell that
knows nothing of the stack until the prologue runs ``eval "$(ocr-platform local env)"``, as ``docs/index.md``
tells a reader to. ``tests/unit/test_doc_snippets.py`` parses every block and shows the runner failing a broken page.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocr_platform.local import stack, supervisor
from tests.doc_snippets import PageSession, clean_environment, collect, run_page

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(
    page.relative_to(REPO).as_posix()
    for page in [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    if any(s.runs for s in collect(page.read_text(encoding="utf-8"), page.relative_to(REPO).as_posix()))
)
#: What ``docs/index.md`` ("Trying the snippets") says a reader's shell has done before a page's first block.
PROLOGUE = 'eval "$(ocr-platform local env)"\n'


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.StackInfo]:
    home = tmp_path_factory.mktemp("doc-pages-stack")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(supervisor.STATE_DIR_ENV, str(home))
        patch.setenv("OCR_MODEL_HUB", "off")  # offline: every model from installed packages
        patch.setenv("OCR_MODEL_CACHE_DIR", str(home / "models"))
        options = stack.LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2, retry_delays_seconds=(0.2, 0.2))
        info, started = supervisor.up(options=options, timeout=300)  # a deadline: a busy machine only takes longer
        assert started
        try:
            yield info
        finally:
            assert supervisor.down()


def test_the_runner_finds_the_pages_that_have_snippets_to_run() -> None:
    assert {"docs/using-it/aws-cli.md", "docs/using-it/jobs-api.md", "docs/using-it/drop-folder.md",
            "docs/using-it/searchable-pdf.md", "docs/using-it/output-formats.md"} <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_a_pages_snippets_run_as_written_on_the_local_stack(page: str, local: stack.StackInfo, tmp_path: Path) -> None:
    work = tmp_path / "repo"
    shutil.copytree(REPO / "samples", work / "samples")
    shutil.copytree(REPO / "docs" / "schemas", work / "docs" / "schemas")
    shell = clean_environment(os.environ, Path(sys.executable).parent)
    session = PageSession(work, shell, state=tmp_path / "shell", prologue=PROLOGUE)
    snippets = collect((REPO / page).read_text(encoding="utf-8"), page)

    ran = list(run_page(snippets, session))

    for _, wrong in ran:
        assert wrong is None, wrong
    assert len(ran) == sum(s.runs for s in snippets)  # none skipped: the runner stops only at a failure
