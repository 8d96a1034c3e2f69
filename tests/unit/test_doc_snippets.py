"""The documentation's shell and Python snippets parse, and every file they hand to a command exists.

Each fenced ``bash`` or ``python`` block of README.md and docs/ is checked as a reader would paste it: bash with
``bash -n``, Python with ``compile``; and every file a snippet gives ``ocr-platform ocr|run|submit`` or uploads with
``aws s3 cp`` is in the repository (``samples/`` holds them, with their sources and licences), so a reader
running the snippet from the repository root meets no "file not found". Running the snippets themselves
against the local stack is ``tests/local/test_e2e.py``'s: the pages in ``RUN_ON_LOCAL_STACK`` block by block, and
the blocks between ``<!-- aws-cli-flow:start -->`` / ``<!-- jobs-api-flow:start -->`` markers. Every other block
says why it is not run, in a comment on the line before it: ``<!-- snippet: needs-aws -->`` (it needs a real AWS
account) or ``<!-- snippet: not-run: <where it is checked instead> -->``; a test here holds every block to that.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(bash|sh|python)[^\n]*\n(.*?)^```", re.M | re.S)
COMMANDS = re.compile(r"(?:^|[\s/])ocr-platform\s+(?:ocr|run|submit)\s+(\S+)|aws\s+s3\s+cp\s+(\S+)")


def _snippets() -> list[tuple[str, str, str]]:
    return [
        (f"{page.relative_to(ROOT)}:{page.read_text(encoding='utf-8')[: match.start()].count(chr(10)) + 1}", match[1], match[2])
        for page in PAGES
        for match in FENCE.finditer(page.read_text(encoding="utf-8"))
    ]


SNIPPETS = _snippets()
#: Pages whose every bash block ``tests/local/test_e2e.py`` runs, in order, on its own local stack.
RUN_ON_LOCAL_STACK = ("docs/using-it/searchable-pdf.md", "docs/using-it/office-and-html.md")
RUN_BETWEEN_MARKERS = ("aws-cli-flow", "jobs-api-flow")
REASON = re.compile(r"<!-- snippet: (needs-aws|not-run: .+) -->$")


def test_every_snippet_is_run_or_says_why_not() -> None:
    unaccounted = []
    for page in PAGES:
        name, text = page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            flow = any(f"<!-- {marker}:start -->" == before for marker in RUN_BETWEEN_MARKERS)
            if name not in RUN_ON_LOCAL_STACK and not flow and not REASON.fullmatch(before):
                unaccounted.append(f"{name}:{text[: match.start()].count(chr(10)) + 1}")
    assert not unaccounted, f"neither run on the local stack nor marked needs-aws / not-run: {unaccounted}"


def test_the_pages_have_snippets() -> None:
    assert len(SNIPPETS) >= 10  # the collector still finds them


@pytest.mark.parametrize(("where", "language", "code"), SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_a_snippet_parses(where: str, language: str, code: str) -> None:
    if language == "python":
        compile(code, where, "exec")
    else:
        done = subprocess.run(["bash", "-n"], input=code, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{where}: {done.stderr}"


@pytest.mark.parametrize(("where", "language", "code"), [s for s in SNIPPETS if s[1] != "python"],
                         ids=[s[0] for s in SNIPPETS if s[1] != "python"])
def test_every_file_a_snippet_reads_is_in_the_repository(where: str, language: str, code: str) -> None:
    joined = code.replace("\\\n", " ")
    for match in COMMANDS.finditer(joined):
        [argument] = shlex.split(match[1] or match[2])
        if argument.startswith(("s3://", "https://", "http://", "$", "-")) or "$" in argument:
            continue
        assert (ROOT / argument).is_file(), f"{where}: {argument} does not exist in the repository (add it to samples/)"
