"""The documentation's runnable snippets: collected from the pages, run in order, checked against what the pages show.

Conventions a page follows (``docs/index.md``, "Trying the snippets", says them for readers):

- A fenced ``bash``, ``sh``, ``console`` or ``python`` block is run as written, from the repository root (a copy of
  ``samples/`` and ``docs/schemas/``), in a shell that has ``.venv/bin`` on ``PATH`` and the local stack's
  ``eval "$(ocr-platform local env)"`` done. A page's blocks run in order in one shell session: variables, functions
  and the working directory one block leaves are there for the next. Each bash block runs under ``set -e`` and must
  exit 0; a ``python`` block runs as a script in the page's current directory and environment.
- The line before a block may mark it ``<!-- snippet: needs-aws -->`` (it needs a real AWS account) or
  ``<!-- snippet: not-run: <why, and where it is checked instead> -->``: such a block is only parsed.
- What a block prints: a block marked ``<!-- snippet: output -->`` right after it, or the lines of a ``console``
  block that do not start with ``$ ``. Each of its lines must appear in the block's output (stdout and stderr
  together), in order; ``…`` stands for any text, and job ids, durations and the working directory are normalised
  on both sides (``normalise``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.M | re.S)
MARK = re.compile(r"<!-- snippet: (needs-aws|not-run: .+|output) -->$")
RUNNABLE = ("bash", "sh", "console", "python")

#: Job ids (hex uuids, dashed uuids, the drop folder's ``inbox-`` ids), durations and sizes that change run to run.
_VOLATILE = (
    (re.compile(r"\binbox-[0-9a-f]{40}\b"), "<id>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<id>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<time>"),
)

#: Shell variables a session does not carry from one block to the next (bash's own, read-only or per-process).
_SHELL_OWN = "BASH*|EUID|UID|PPID|SHELLOPTS|FUNCNAME|GROUPS|PIPESTATUS|_|PWD|OLDPWD|SECONDS|RANDOM|SRANDOM|LINENO|HISTCMD|EPOCH*|SHLVL|COLUMNS|LINES|_snippet_*"


@dataclass(frozen=True)
class Snippet:
    """One fenced block of a page: where it is, its language, its code and how the page marks it."""

    where: str
    language: str
    code: str
    #: ``None`` (run it), ``needs-aws`` or ``not-run: <reason>`` (parse it only).
    mark: str | None = None
    #: What the page says the block prints (an output block after it, or a console block's output lines).
    expected: str | None = None

    @property
    def runs(self) -> bool:
        return self.mark is None


def collect(text: str, page: str) -> list[Snippet]:
    """The runnable-language blocks of a page, in order, each with its mark and the output the page shows for it."""
    snippets: list[Snippet] = []
    for match in FENCE.finditer(text):
        line = text[: match.start()].count("\n") + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        mark = MARK.fullmatch(before)
        where = f"{page}:{line}"
        if mark and mark[1] == "output":
            if not snippets or not snippets[-1].runs or snippets[-1].expected is not None:
                raise ValueError(f"{where}: an output block must follow a block that runs (and only one)")
            last = snippets[-1]
            snippets[-1] = Snippet(last.where, last.language, last.code, last.mark, match[2])
            continue
        language = match[1]
        if language not in RUNNABLE:
            continue
        code, expected = match[2], None
        if language == "console":
            code, expected = _split_console(match[2])
        snippets.append(Snippet(where, language, code, mark[1] if mark else None, expected))
    return snippets


def _split_console(block: str) -> tuple[str, str]:
    """A ``console`` block's commands (``$ `` lines and their ``\\`` continuations) and the output lines between them."""
    commands, output, continued = [], [], False
    for line in block.splitlines():
        if continued or line.startswith("$ "):
            commands.append(line if continued else line[2:])
            continued = line.endswith("\\")
        else:
            output.append(line)
    return "\n".join(commands) + "\n", "\n".join(output)


def parses(snippet: Snippet) -> str | None:
    """Why the block does not parse (``bash -n``, Python's compiler), or ``None``."""
    if snippet.language == "python":
        try:
            compile(snippet.code, snippet.where, "exec")
        except SyntaxError as err:
            return f"{snippet.where}: {err}"
        return None
    done = subprocess.run(["bash", "-n"], input=snippet.code, capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else f"{snippet.where}: {done.stderr.strip()}"


def normalise(text: str, cwd: Path | None = None) -> str:
    if cwd is not None:
        text = text.replace(str(cwd), "<cwd>")
    for pattern, stand_in in _VOLATILE:
        text = pattern.sub(stand_in, text)
    return text


def missing_output(expected: str, printed: str, cwd: Path | None = None) -> str | None:
    """The first line of ``expected`` that ``printed`` does not show (in order, ``…`` = any text), or ``None``."""
    lines = iter(normalise(printed, cwd).splitlines())
    for wanted in normalise(expected, cwd).splitlines():
        if not wanted.strip():
            continue
        pattern = re.compile(".*?".join(re.escape(part) for part in wanted.strip().split("…")))
        if not any(pattern.search(line) for line in lines):
            return wanted.strip()
    return None


@dataclass(frozen=True)
class Outcome:
    snippet: Snippet
    returncode: int
    output: str


class PageSession:
    """One page's shell session in ``cwd``: each block runs in a fresh process that starts from the variables,
    functions and directory the previous block left (kept in files under ``state``)."""

    def __init__(self, cwd: Path, environment: Mapping[str, str], *, state: Path, prologue: str = "", timeout: float = 300) -> None:
        self.cwd, self.timeout = cwd, timeout
        self.environment = dict(environment)
        self._vars, self._env, self._dir = state / "vars.sh", state / "env", state / "cwd"
        state.mkdir(parents=True, exist_ok=True)
        self._dir.write_text(str(cwd), encoding="utf-8")
        if prologue:
            outcome = self.run(Snippet("prologue", "bash", prologue))
            if outcome.returncode:
                raise RuntimeError(f"the page's shell could not be prepared: {outcome.output}")

    def run(self, snippet: Snippet) -> Outcome:
        if snippet.language == "python":
            argv = [sys.executable, "-c", snippet.code]
        else:
            script = (
                f'[ -f "{self._vars}" ] && source "{self._vars}" 2>/dev/null\n'
                f'set -e\n{snippet.code}\nset +e\n'
                f'for _snippet_v in $(compgen -v); do case $_snippet_v in {_SHELL_OWN}) ;; *) declare -p "$_snippet_v";; esac; done'
                f' > "{self._vars}" 2>/dev/null\ndeclare -f >> "{self._vars}"\npwd > "{self._dir}"\nenv -0 > "{self._env}"\n'
            )
            argv = ["bash", "-c", script]
        done = subprocess.run(
            argv, cwd=self._dir.read_text(encoding="utf-8").strip(), env=self._exported(), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=self.timeout, check=False,
        )
        return Outcome(snippet, done.returncode, done.stdout)

    def _exported(self) -> dict[str, str]:
        if not self._env.exists():
            return self.environment
        pairs = (entry.split("=", 1) for entry in self._env.read_text(encoding="utf-8").split("\0") if "=" in entry)
        return {name: value for name, value in pairs}


def failure(outcome: Outcome, cwd: Path | None = None) -> str | None:
    """What is wrong with a block's run (its exit status, a traceback, output the page shows but it did not print)."""
    snippet = outcome.snippet
    shown = f"{snippet.where} ({snippet.language}):\n{snippet.code}\n--- printed:\n{outcome.output[-4000:]}"
    if outcome.returncode != 0:
        return f"exited {outcome.returncode}: {shown}"
    if "Traceback (most recent call last)" in outcome.output and snippet.language != "python":
        return f"printed a traceback: {shown}"
    if snippet.expected is not None:
        missing = missing_output(snippet.expected, outcome.output, cwd)
        if missing is not None:
            return f"the page shows {missing!r}, which it did not print: {shown}"
    return None


def run_page(snippets: list[Snippet], session: PageSession) -> Iterator[tuple[Outcome, str | None]]:
    """Each runnable block in order, with what is wrong with its run; stops after the first that fails."""
    for snippet in snippets:
        if not snippet.runs:
            continue
        outcome = session.run(snippet)
        wrong = failure(outcome, session.cwd)
        yield outcome, wrong
        if wrong:
            return


def clean_environment(environ: Mapping[str, str], bin_dir: Path) -> dict[str, str]:
    """The environment of a reader's fresh shell: no AWS endpoint, credentials, region or platform names (only
    ``eval "$(ocr-platform local env)"`` tells it where the stack is), and ``bin_dir`` first on ``PATH``."""
    told = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE")
    shell = {
        name: value for name, value in environ.items()
        if name not in told and not name.startswith("AWS_ENDPOINT_URL")
        and not (name.startswith("OCR_") and name.endswith(("_NAME", "_URL", "_ID", "_ARN")))
    }
    shell["PATH"] = f"{bin_dir}{os.pathsep}{environ.get('PATH', '')}"
    return shell
