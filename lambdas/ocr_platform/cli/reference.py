"""The reference pages that must not drift from the code, written from the code itself.

The documentation site is built with these in place of markers on its pages (``scripts/docs_hooks.py``, an MkDocs
hook): the command line's reference from the argument parser (every command, option, choice and default, so a
new flag is documented by being added), the CLI's error codes and exit statuses from
``ocr_platform.core.client_errors.CLIENT_CODES``, and a job's error codes from ``ocr_platform.core.errors.CAUSES``.
``python -m ocr_platform.cli.reference cli|exit-codes|error-codes`` prints one of them.

>>> "| `--model` `MODEL` |" in cli_reference()
True
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator

from ocr_platform.core.client_errors import CLIENT_CODES, ExitStatus
from ocr_platform.core.errors import CAUSES

#: The marker a page holds where each reference goes, and what writes it.
MARKERS: dict[str, Callable[[], str]] = {}


def _marker(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(write: Callable[[], str]) -> Callable[[], str]:
        MARKERS[f"<!-- generated: {name} -->"] = write
        return write
    return register


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next((dict(a.choices) for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})


def _own_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.dest != "help" and not isinstance(a, argparse._SubParsersAction)]


def _commands(
    parser: argparse.ArgumentParser, prefix: str = "", inherited: tuple[argparse.Action, ...] = (),
) -> Iterator[tuple[str, argparse.ArgumentParser, str, list[argparse.Action]]]:
    """``(name, parser, help, arguments)`` of every command that runs, subcommands (``models seed``) included, in
    parser order; a subcommand's arguments include its group's (``models --stack NAME seed DIR``)."""
    helps = {a.dest: a.help for sub in parser._actions if isinstance(sub, argparse._SubParsersAction) for a in sub._choices_actions}
    for name, sub in _subcommands(parser).items():
        full = f"{prefix}{name}"
        if _subcommands(sub):
            yield from _commands(sub, f"{full} ", (*inherited, *_own_actions(sub)))
        else:
            yield full, sub, str(helps.get(name) or ""), [*inherited, *_own_actions(sub)]


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _option_row(action: argparse.Action) -> str:
    name = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest.upper()}`"
    if action.option_strings and action.nargs != 0:
        name += f" `{action.metavar or action.dest.upper()}`"
    details = [str(action.help or "")]
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        details.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.required and action.option_strings:
        details.append("required")
    if isinstance(action, argparse._AppendAction):
        details.append("may be repeated")
    if action.default not in (None, False, True, [], argparse.SUPPRESS) and "default" not in str(action.help):
        details.append(f"default `{action.default}`")
    if action.nargs in ("+", "*"):
        details.append("one or more" if action.nargs == "+" else "any number")
    return f"| {name} | {_cell('; '.join(d for d in details if d))} |"


@_marker("cli-reference")
def cli_reference() -> str:
    """Every command of ``ocr-platform`` with its usage and options, from the parser ``main`` uses."""
    from ocr_platform.cli.commands import _parser

    parser = _parser()
    parser.prog = "ocr-platform"
    out = ["`ocr-platform [OPTION] COMMAND ...`, where `OPTION` is one of:", "", "| option | what it does |", "| --- | --- |"]
    out += [_option_row(a) for a in parser._actions if a.option_strings and a.dest != "help"]
    for name, sub, summary, arguments in _commands(parser):
        sub.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=110)
        usage = sub.format_usage().removeprefix("usage: ").strip()
        out += ["", f"### `{name}`", "", f"{summary[:1].upper()}{summary[1:]}.", "", "```text", usage, "```", "",
                "| argument | what it does |", "| --- | --- |"]
        out += [_option_row(a) for a in arguments]
    return "\n".join(out) + "\n"


@_marker("cli-exit-codes")
def exit_codes() -> str:
    """The exit statuses and, for each, the codes of the ``error:`` lines that end with it."""
    meaning = {
        ExitStatus.OK: "success",
        ExitStatus.JOB_FAILED: "the job (or the in-process `ocr` run, or a `doctor` check) ended `FAILED`",
        ExitStatus.USAGE: "usage or configuration",
        ExitStatus.AWS_ACCESS: "AWS refused or could not be reached",
        ExitStatus.NOT_FOUND: "no such job, or no result yet",
        ExitStatus.TIMED_OUT: "waiting gave up while the job still runs (`submit --wait`, `status --wait`, `run`)",
        ExitStatus.INTERRUPTED: "stopped with Ctrl-C",
    }
    out = ["| exit | meaning | codes |", "| --- | --- | --- |"]
    for status in ExitStatus:
        codes = [f"`{code}`" for code, (exit_status, _) in CLIENT_CODES.items() if exit_status is status]
        if status is ExitStatus.JOB_FAILED:
            codes.insert(0, "the job's own [error code](error-codes.md), e.g. `corrupt_document`")
        out.append(f"| {int(status)} | {meaning[status]} | {', '.join(codes)} |")
    out += ["", "| code | exit | meaning |", "| --- | --- | --- |"]
    out += [f"| `{code}` | {int(status)} | {_cell(text)} |" for code, (status, text) in CLIENT_CODES.items()]
    return "\n".join(out) + "\n"


@_marker("error-codes")
def error_codes() -> str:
    """The codes a FAILED job carries, from ``ocr_platform.core.errors.CAUSES``."""
    return "\n".join(["| code | cause |", "| --- | --- |", *(f"| `{code}` | {_cell(cause)} |" for code, cause in CAUSES.items())]) + "\n"


def fill(markdown: str) -> str:
    """``markdown`` with every marker replaced by what it stands for."""
    for marker, write in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, write())
    return markdown


if __name__ == "__main__":
    print({"cli": cli_reference, "exit-codes": exit_codes, "error-codes": error_codes}[sys.argv[1]](), end="")
