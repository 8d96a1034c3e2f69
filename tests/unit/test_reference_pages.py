"""The reference pages written from the code (``ocr_platform.cli.reference``) are complete, and in place.

The site's build fills each page's ``<!-- generated: ... -->`` marker from the parser and the error registries, so
these pages cannot fall behind a new option or code; what could still go wrong is a registry that misses a code
the code raises, a generator that drops part of the parser, or a page that lost its marker. Each is a test here.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ocr_platform.cli import commands
from ocr_platform.cli.reference import MARKERS, fill
from ocr_platform.core.client_errors import CLIENT_CODES, ExitStatus
from ocr_platform.core.errors import CAUSES, ErrorCode
from tests.unit.test_contracts import _client_error_codes_in_code

DOCS = Path(__file__).resolve().parents[2] / "docs"
CLI_PAGE = DOCS / "using-it" / "cli.md"
ERROR_PAGE = DOCS / "using-it" / "error-codes.md"


def _every_parser(parser: argparse.ArgumentParser, name: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _every_parser(sub, f"{name} {sub_name}".strip())
    return found


def test_the_pages_hold_their_markers_and_the_build_fills_them() -> None:
    cli_page, error_page = CLI_PAGE.read_text(encoding="utf-8"), ERROR_PAGE.read_text(encoding="utf-8")
    assert {m for m in MARKERS if m in cli_page + error_page} == set(MARKERS)
    assert "<!-- generated:" not in fill(cli_page) + fill(error_page)


def test_the_command_line_page_names_every_command_option_and_choice() -> None:
    page = fill(CLI_PAGE.read_text(encoding="utf-8"))
    for name, parser in _every_parser(commands._parser()):
        if name and not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            assert f"### `{name}`" in page, f"no section for `ocr-platform {name}`"
        heading = next((h for h in re.findall(r"^### `([^`]+)`", page, re.M) if h == name or h.startswith(f"{name} ")), None)
        section = page.split(f"### `{heading}`", 1)[-1].split("\n### ", 1)[0] if name else page
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in section, f"`ocr-platform {name}` lacks {option}"
            if action.choices and not isinstance(action, argparse._SubParsersAction):
                missing = [choice for choice in action.choices if f"`{choice}`" not in section]
                assert not missing, f"`ocr-platform {name} {action.dest}` lacks the choices {missing}"


def test_every_code_a_job_can_fail_with_has_a_cause_on_the_error_page() -> None:
    in_code = {value for key, value in vars(ErrorCode).items() if key.isupper()}
    assert set(CAUSES) == in_code, f"without a cause: {sorted(in_code - set(CAUSES))}; gone: {sorted(set(CAUSES) - in_code)}"
    page = fill(ERROR_PAGE.read_text(encoding="utf-8"))
    assert {code for code in re.findall(r"^\| `([a-z_]+)` \|", page, re.M)} == in_code


def test_every_code_the_cli_prints_is_in_the_registry_with_its_exit_status() -> None:
    raised = _client_error_codes_in_code()
    registered = {code: status for code, (status, _) in CLIENT_CODES.items()}
    assert {code: registered.get(code) for code in raised} == raised, "CLIENT_CODES misses or mis-files a raised code"
    job_codes = {value for key, value in vars(ErrorCode).items() if key.isupper()}
    printed_otherwise = {"output_unavailable"}  # ``ocr`` prints the format writer's code with the job's exit status
    assert set(registered) - set(raised) <= job_codes | printed_otherwise, sorted(set(registered) - set(raised))
    page = fill(CLI_PAGE.read_text(encoding="utf-8"))
    for status in ExitStatus:
        assert f"| {int(status)} |" in page, f"the exit table lacks {status.name}"
    for code in CLIENT_CODES:
        assert f"| `{code}` |" in page
