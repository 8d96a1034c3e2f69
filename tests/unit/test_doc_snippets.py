"""The documentation's shell and Python snippets parse, every file they hand to a command exists, and the runner that
``tests/local/test_doc_pages.py`` runs them with fails a page whose snippet breaks.

Each fenced ``bash``, ``sh``, ``console`` or ``python`` block of README.md and docs/ is collected
(``tests/doc_snippets.py`` says the conventions): here each is parsed as a reader would paste it (``bash -n``,
Python's compiler), which is all a block marked ``<!-- snippet: needs-aws -->`` or ``not-run: <why>`` gets; every
other block is run on a local stack by ``tests/local/test_doc_pages.py``. Every file a snippet gives
``ocr-platform ocr|run|submit`` or uploads with ``aws s3 cp`` is in the repository (``samples/`` holds them, with
their sources and licences), so a reader running the snippet from the repository root meets no "file not found".
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests import doc_snippets
from tests.doc_snippets import PageSession, Snippet, collect, missing_output, run_page

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMANDS = re.compile(r"(?:^|[\s/])ocr-platform\s+(?:ocr|run|submit)\s+(\S+)|aws\s+s3\s+cp\s+(\S+)")

SNIPPETS = [s for page in PAGES for s in collect(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())]


def test_the_pages_have_snippets_and_most_run() -> None:
    assert len(SNIPPETS) >= 14  # the collector still finds them
    # Only the README's set-up and site-building commands, which CI runs itself (.ci/run), are left out as not-run.
    assert {s.where.split(":")[0] for s in SNIPPETS if s.mark and s.mark.startswith("not-run")} <= {"README.md"}


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_a_snippet_parses(snippet: Snippet) -> None:
    assert doc_snippets.parses(snippet) is None


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.language != "python"],
                         ids=[s.where for s in SNIPPETS if s.language != "python"])
def test_every_file_a_snippet_reads_is_in_the_repository(snippet: Snippet) -> None:
    joined = snippet.code.replace("\\\n", " ")
    for match in COMMANDS.finditer(joined):
        [argument] = shlex.split(match[1] or match[2])
        if argument.startswith(("s3://", "https://", "http://", "$", "-")) or "$" in argument:
            continue
        assert (ROOT / argument).is_file(), f"{snippet.where}: {argument} does not exist in the repository (add it to samples/)"


PAGE = """# A page

<!-- snippet: needs-aws -->
```bash
aws cloudformation describe-stacks --stack-name OcrPlatform
```

```bash
greeting=hello
export AUDIENCE=world
say() { echo "$1, $AUDIENCE"; }
mkdir -p sub && cd sub
```

```bash
say "$greeting"
echo "job 0123456789abcdef0123456789abcdef done in 1.25 s in $PWD"
```
<!-- snippet: output -->
```text
hello, world
job 00000000000000000000000000000000 done in 3 s in …/sub
```

```python
import os, pathlib
print(os.environ["AUDIENCE"], pathlib.Path.cwd().name)
```

```console
$ echo one && \\
  echo two
one
two
```
"""


def _run(page: str, tmp_path: Path) -> list[tuple[str, str | None]]:
    (tmp_path / "work").mkdir(exist_ok=True)
    session = PageSession(tmp_path / "work", {"PATH": os.environ["PATH"]}, state=tmp_path / "state")
    return [(outcome.snippet.where, wrong) for outcome, wrong in run_page(collect(page, "page.md"), session)]


def test_the_collector_reads_marks_outputs_and_console_blocks() -> None:
    aws, setup, say, python, console = collect(PAGE, "page.md")
    assert (aws.mark, aws.runs, setup.runs) == ("needs-aws", False, True)
    assert say.expected is not None and "hello, world" in say.expected
    assert (python.language, python.expected) == ("python", None)
    assert console.code == "echo one && \\\n  echo two\n" and console.expected == "one\ntwo"


def test_a_page_runs_in_one_session_and_matches_what_it_shows(tmp_path: Path) -> None:
    ran = _run(PAGE, tmp_path)
    assert [where for where, _ in ran] == ["page.md:8", "page.md:15", "page.md:25", "page.md:30"]
    assert all(wrong is None for _, wrong in ran), ran


@pytest.mark.parametrize(("broken", "complaint"), [
    (PAGE.replace('say "$greeting"', 'say "$greeting"\nls no-such-file'), "exited 2"),
    (PAGE.replace("hello, world\n", "hello, there\n"), "the page shows 'hello, there'"),
    (PAGE.replace('os.environ["AUDIENCE"]', 'os.environ["NOBODY"]'), "exited 1"),
    (PAGE.replace("one\ntwo\n```", "two\none\n```"), "the page shows 'one'"),
    (PAGE.replace("echo one", "echo 'Traceback (most recent call last):'; echo one"), "printed a traceback"),
])
def test_a_broken_page_fails_at_its_broken_block_and_runs_nothing_after_it(tmp_path: Path, broken: str, complaint: str) -> None:
    ran = _run(broken, tmp_path)
    *passed, (where, wrong) = ran
    assert all(w is None for _, w in passed)
    assert wrong is not None and wrong.startswith(complaint) or complaint in (wrong or ""), wrong


def test_an_output_block_needs_a_block_that_runs_before_it() -> None:
    with pytest.raises(ValueError, match="page.md:2: an output block must follow"):
        collect("<!-- snippet: output -->\n```text\nhi\n```\n", "page.md")


def test_output_is_matched_in_order_with_ellipses_and_volatile_values_normalised() -> None:
    printed = "submitted job 1f0e2d3c4b5a69788796a5b4c3d2e1f0 (pp-ocrv6)\n  COMPLETED in 2.4 s\nwrote /tmp/x/result.json\n"
    assert missing_output("submitted job <id> (pp-ocrv6)\nCOMPLETED in 9 s\nwrote …result.json", printed) is None
    assert missing_output("COMPLETED\nsubmitted job", printed) == "submitted job"
    assert missing_output("wrote <cwd>/result.json", printed, Path("/tmp/x")) is None


def test_a_readers_shell_knows_nothing_of_any_stack_until_it_is_told() -> None:
    shell = doc_snippets.clean_environment(
        {"PATH": "/usr/bin", "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "x", "OCR_BUCKET_NAME": "b",
         "OCR_LOCAL_HOME": "/tmp/home", "OCR_MODEL_HUB": "off"}, Path(sys.executable).parent)
    assert shell == {"PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin", "OCR_LOCAL_HOME": "/tmp/home", "OCR_MODEL_HUB": "off"}
