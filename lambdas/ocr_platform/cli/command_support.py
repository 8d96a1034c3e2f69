"""What the ``ocr-platform`` commands share: the job options their flags set, and how they print."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ocr_platform.core.client_errors import ExitStatus, PlatformClientError
from ocr_platform.core.s3_layout import OUTPUT_FILES


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The job's ``options`` from ``--variant``, ``--backend``, ``--no-orientation``, ``--text-layer``, ``--forms``,
    ``--pdf`` and ``--format`` (only what was set: a stored format or ``pdf`` is asked of the job in ``outputs``)."""
    options: dict[str, Any] = {}
    if args.variant:
        options["variant"] = args.variant
    if getattr(args, "backend", None):
        options["backend"] = args.backend
    if not args.orientation:
        options["orientation"] = False
    if args.text_layer:
        options["text_layer"] = args.text_layer
    if getattr(args, "forms", False):
        options["features"] = ["forms"]
    outputs = ["pdf"] if getattr(args, "pdf", None) else []
    chosen = getattr(args, "format", None)
    if chosen in OUTPUT_FILES and chosen not in outputs:  # the job writes the file itself (a run, a submit)
        outputs.append(chosen)
    if outputs:
        options["outputs"] = outputs
    return options


#: What ``--format`` may name: result.json (the default), Markdown, the stored formats and the searchable PDF.
FORMAT_CHOICES = ("json", "md", "hocr", "alto", "textract", "pdf")


def write_formatted(body: bytes, output: Path | None) -> None:
    """A formatted result to ``output``, else to stdout."""
    if output is not None:
        output.write_bytes(body)
    else:
        sys.stdout.write(body.decode("utf-8"))
        sys.stdout.flush()


def pdf_target(args: argparse.Namespace) -> Path | None:
    """Where the searchable PDF goes: ``--pdf FILE``, or ``--output FILE`` with ``--format pdf`` (which needs one)."""
    if getattr(args, "format", None) != "pdf":
        return getattr(args, "pdf", None)
    if args.output is None:
        raise PlatformClientError("output_required", "--format pdf writes a file: name it with --output FILE.", ExitStatus.USAGE)
    return Path(args.output)


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def print_preview(text: str, max_lines: int = 20) -> None:
    """The first lines of a result's text on stderr, so a person sees what was read."""
    lines = text.replace("\f", "\n").splitlines()
    print("\n".join(f"  | {line}" for line in lines[:max_lines]) + ("\n  | ..." if len(lines) > max_lines else ""), file=sys.stderr)


def print_warnings(warnings: Sequence[Mapping[str, Any]]) -> None:
    """One ``warning: <code>: <message>`` line on stderr per warning of a result or job item."""
    for warning in warnings:
        print(f"warning: {warning.get('code')}: {warning.get('message')}", file=sys.stderr)
